// Our own formats' lines as PostgreSQL writes them are the bytes the reference renders in JavaScript
// (line-oracle.ts), for books made to be awkward: every control character, quotes, commas, line
// breaks, backslashes and characters beyond the BMP in every text column and in raw, an account name
// that needs escaping in SQL, JSON and CSV, NULL beside the empty string, ids above 2^64 that share a
// millisecond, decimals of every scale, infinite times; over the whole books, a range and one coin,
// across pages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bill as ExchangeBill } from "../../src/exchange/bill-item.ts";
import { FORMATS } from "../../src/export/formats.ts";
import { EARLIEST_MS, inLedgerSnapshot, LATEST_MS, type BillsRange } from "../../src/store/bills-read.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { directPool } from "../../src/store/prisma.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { exportOn } from "./export-text.ts";
import { oracleLines } from "./line-oracle.ts";

const CONTROLS = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join("");
const AWKWARD = [`${CONTROLS}\u007f`, 'say "hi", \\ then\r\nmore', "", "\u2028\u2029 é 😀 \\u0041", "\\", ","];
const ACCOUNT = `o'brien "\\" ,\n\t😀`;
const FIRST_MS = 1_767_225_600_123;
/**
 * Seen times beside the usual: infinite; before 1970 and before 2000 (negative offsets); beyond 2285
 * (past a double's exact microseconds); the first and the last instant four-digit years can write.
 */
const FIRST_SEEN: Record<number, string> = {
  7: "infinity",
  3: "1969-12-31T23:59:59.999Z",
  4: "0001-01-01T00:00:00.000Z",
  9: "1999-12-31T23:59:59.999Z",
};
const LAST_SEEN: Record<number, string> = {
  7: "-infinity",
  3: "2300-06-15T12:34:56.789Z",
  4: "9999-12-31T23:59:59.999Z",
  9: "2000-01-01T00:00:00.000Z",
};

interface Bill {
  id: string;
  coin: string;
  symbol: string | null;
  type: string;
  amount: string;
  balance: string;
  raw: unknown;
  reason: string | null;
}

/** Bills in twos per millisecond, ids that order differently as text and as numbers. */
function books(): Bill[] {
  const bills: Bill[] = [];
  const ids = ["9", "10", "18446744073709551616", "18446744073709551617123", "99999999999999999999999999", "100"];
  AWKWARD.forEach((s, i) => {
    for (const [k, id] of ids.entries()) {
      bills.push({
        id: `${i + 1}${id}`,
        coin: k % 2 === 0 ? "USDT" : s === "" ? "C" : `C${s}`,
        symbol: k % 3 === 0 ? null : k % 3 === 1 ? s : "cmt_btcusdt",
        type: s === "" ? "deposit" : `type ${s}`,
        amount: ["1.50", "-0.000000000000000001", "98765432109876543210.123456789012345678", "0", "0.000", "7"][k]!,
        balance: k === 5 ? "NaN" : `${i}.${"0".repeat(k)}`,
        raw: { note: s, nested: { list: [s, 1e-7, "12345678901234567890", null, true] }, [s || "k"]: s },
        reason: k % 2 === 0 ? null : s,
      });
    }
  });
  return bills;
}

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
  for (const [n, b] of books().entries()) {
    const ms = FIRST_MS + Math.floor(n / 2) * 500;
    await t.db.$executeRawUnsafe(
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee,
         created_at, created_at_ms, raw, first_seen_at, last_seen_at, source, transfer_reason)
       VALUES ($1, $2, $3, $4, $5, $6::numeric, $7::numeric, 0, timestamptz 'epoch' + $8::bigint * interval '1 millisecond',
         $8::bigint, $9::jsonb, $12::timestamptz, $13::timestamptz, $10, $11)`,
      ACCOUNT,
      b.id,
      b.coin,
      b.symbol,
      b.type,
      b.amount,
      b.balance,
      String(ms),
      JSON.stringify(b.raw),
      n % 2 === 0 ? "v2" : "v3",
      b.reason,
      FIRST_SEEN[n] ?? new Date(ms + 1).toISOString(),
      LAST_SEEN[n] ?? new Date(ms + 2000).toISOString(),
    );
  }
  // Items as an exchange that pretty-prints its JSON sends them: line breaks between the tokens.
  await commitBillsWindow(t.db, {
    accountName: ACCOUNT,
    stream: "bills",
    cursorMs: FIRST_MS + 100_000,
    bills: PRETTY.map((text, i) => parseBillOf(text, i)),
    rejected: [],
    context: { fromMs: 0, toMs: FIRST_MS + 100_000 },
  });
});

const PRETTY = [
  '{\n  "billId": "77001",\n  "coin": "USDT",\n  "amount": "1.5",\n  "balance": "9.5",\n  "fillFee": "0"\n}',
  '{\r\n\t"billId":"77002", "coin":"USDT","amount":"-0.5","balance":"9.0","fillFee":"0","note":"a\\nb"\r\n}',
];

function parseBillOf(text: string, i: number): ExchangeBill {
  const raw = JSON.parse(text) as Record<string, string>;
  return {
    billId: raw.billId!,
    coin: raw.coin!,
    symbol: null,
    businessType: "deposit",
    amount: raw.amount!,
    balance: raw.balance!,
    fillFee: raw.fillFee!,
    cTimeMs: FIRST_MS + 50_000 + i,
    raw,
    rawText: text,
  };
}
afterAll(async () => {
  await t.close();
});

/** The export's text and totals, and the reference's text with the bills it holds. */
async function exported(format: "jsonl" | "ledger-csv", range: BillsRange) {
  const client = await directPool(t.db)!.connect();
  try {
    return await inLedgerSnapshot(client, async () => {
      const { text, totals } = await exportOn(client, range, format, 2);
      const oracle = await oracleLines(client, range, format);
      return { text, totals, oracle: { ...oracle, text: `${FORMATS[format].header}${oracle.text}` } };
    });
  } finally {
    client.release();
  }
}

const RANGES: [string, BillsRange][] = [
  ["the whole books", { account: ACCOUNT, fromMs: EARLIEST_MS, toMs: LATEST_MS }],
  ["a range", { account: ACCOUNT, fromMs: FIRST_MS + 1500, toMs: FIRST_MS + 6000 }],
  ["one coin", { account: ACCOUNT, fromMs: EARLIEST_MS, toMs: LATEST_MS, coin: `C${AWKWARD[1]}` }],
];

it("gives raw as the exchange sent it: jsonl one line a bill (line breaks between tokens as spaces), ledger-csv byte for byte", async () => {
  const range = { account: ACCOUNT, fromMs: FIRST_MS + 50_000, toMs: FIRST_MS + 60_000 };
  const jsonl = (await exported("jsonl", range)).text.trimEnd().split("\n");
  expect(jsonl).toHaveLength(PRETTY.length);
  expect(jsonl.map((line) => JSON.parse(line) as { raw: unknown }).map((o) => o.raw)).toEqual(
    PRETTY.map((text) => JSON.parse(text)),
  );
  expect(jsonl[0]).toContain(`"raw":${PRETTY[0]!.replace(/[\n\r]/g, " ")},`);
  const csv = (await exported("ledger-csv", range)).text;
  for (const text of PRETTY) expect(csv).toContain(`"${text.replaceAll('"', '""')}"`);
});

describe.each(["jsonl", "ledger-csv"] as const)("%s", (format) => {
  it.each(RANGES)("%s: the reference's bytes", async (_, range) => {
    const { text, totals, oracle } = await exported(format, range);
    expect(oracle.bills).toBeGreaterThan(2);
    expect(totals).toEqual({ bills: oracle.bills, lines: oracle.bills });
    expect(text).toBe(oracle.text);
  });
});
