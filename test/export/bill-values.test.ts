// Our own formats' lines from a bill's values: values the books' checks never let in are refused by
// name, never written half or guessed: a NULL where a column has none, an infinite creation time, a
// time finer than a millisecond or beyond four-digit years. The values come from PostgreSQL's own
// binary COPY, as an export reads them.
import { afterAll, beforeAll, expect, it } from "vitest";
import { copyPages } from "../../src/export/copy-pages.ts";
import { BillValueError } from "../../src/export/bill-values.ts";
import { FORMATS } from "../../src/export/formats.ts";
import { createDb, directPool, type Db } from "../../src/store/prisma.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  db = createDb(t.url);
});
afterAll(async () => {
  await db.$disconnect();
  await t.drop();
});

const FINE = {
  bill_id: "'5'",
  coin: "'USDT'",
  symbol: "NULL::text",
  business_type: "'deposit'",
  amount: "'1.5'",
  balance: "'2'",
  fill_fee: "'0'",
  created_at: "timestamptz '2026-01-31 14:25:13.123+00'",
  payload: `'{"billId":"5"}'`,
  first_seen_at: "timestamptz '2026-01-31 14:25:14+00'",
  last_seen_at: "timestamptz '2026-01-31 14:25:14+00'",
  source: "'v2'",
  transfer_reason: "NULL::text",
};

async function render(format: "jsonl" | "ledger-csv", values: Partial<typeof FINE>): Promise<string> {
  const columns = Object.values({ ...FINE, ...values }).join(", ");
  const f = FORMATS[format];
  if (f.reads !== "every column") throw new Error(`${format} is a line per bill`);
  const lines = f.lines({ account: "a", fromMs: 0, toMs: 1 });
  const client = await directPool(db)!.connect();
  try {
    let text = "";
    for await (const page of copyPages(client, `COPY (SELECT ${columns}) TO STDOUT WITH (FORMAT binary)`, 10))
      text += lines.render(page).toString();
    return text;
  } finally {
    client.release(true);
  }
}

it("writes a bill's line from the values as sent", async () => {
  expect(await render("ledger-csv", {})).toBe(
    'a,5,USDT,,deposit,1.5,2,0,2026-01-31T14:25:13.123Z,1769869513123,"{""billId"":""5""}",' +
      "2026-01-31T14:25:14.000Z,2026-01-31T14:25:14.000Z,v2,\n",
  );
  expect(await render("jsonl", {})).toBe(
    '{"account_name":"a","bill_id":"5","coin":"USDT","symbol":null,"business_type":"deposit","amount":"1.5",' +
      '"balance":"2","fill_fee":"0","created_at":"2026-01-31T14:25:13.123Z","created_at_ms":"1769869513123",' +
      '"raw":{"billId":"5"},"first_seen_at":"2026-01-31T14:25:14.000Z","last_seen_at":"2026-01-31T14:25:14.000Z",' +
      '"source":"v2","transfer_reason":null}\n',
  );
});

it.each([
  ["a NULL coin", { coin: "NULL::text" }, /^bill 5: coin is NULL$/],
  ["a NULL payload", { payload: "NULL::text" }, /^bill 5: raw is NULL$/],
  ["an infinite creation time", { created_at: "timestamptz 'infinity'" }, /^bill 5: created_at is infinite$/],
  [
    "a time with microseconds",
    { first_seen_at: "timestamptz '2026-01-31 14:25:14.000001+00'" },
    /^bill 5: first_seen_at is a time with microseconds/,
  ],
  [
    "a year of five digits",
    { last_seen_at: "timestamptz '10000-01-01 00:00:00+00'" },
    /^bill 5: last_seen_at is a time outside the years 1 to 9999/,
  ],
])("refuses %s by name", async (_, values, message) => {
  for (const format of ["jsonl", "ledger-csv"] as const) {
    const written = render(format, values);
    await expect(written).rejects.toThrow(BillValueError);
    await expect(written).rejects.toThrow(message);
  }
});
