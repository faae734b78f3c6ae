// The daily_rollups migration on real PostgreSQL: it back-fills the rollups of bills stored before
// it; the BI views keep their columns and types (information_schema, before and after) and return
// what their old definitions return, edge cases included (bills of one millisecond whose ids sort
// differently as text and as numbers, unknown business types, scales); and the plans BI queries
// get: a day filter through an index, the latest balances from an index, no Seq Scan on bills.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bill } from "../../../src/exchange/bill-item.ts";
import { startSandbox } from "../../../src/sandbox/index.ts";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { commitBillsWindow } from "../../../src/store/bills-window.ts";
import { createDb, type Db } from "../../../src/store/prisma.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { storeBillsTheOldWay } from "../../support/bills-before-null-symbol.ts";
import { migrateBeforeRollups, ROLLUP_VIEWS } from "./before-rollups.ts";
import { createOldViews, expectBooksAgree } from "./checks.ts";
import { insertBills } from "../../support/insert-bills.ts";

let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await createTestDatabase();
  await migrateBeforeRollups(database.url);
  db = createDb(database.url);
});
afterAll(async () => {
  await db.$disconnect();
  await database.drop();
});

const viewColumns = () =>
  db.$queryRawUnsafe<Record<string, unknown>[]>(
    `SELECT table_name, ordinal_position, column_name, data_type, numeric_precision, numeric_scale, datetime_precision, is_nullable
     FROM information_schema.columns WHERE table_schema = 'public' AND table_name IN (${ROLLUP_VIEWS.map((v) => `'${v}'`).join(", ")})
     ORDER BY table_name, ordinal_position`,
  );

const bill = (id: string, over: Partial<Bill>): Bill => ({
  billId: id,
  coin: "USDT",
  symbol: "cmt_ethusdt",
  businessType: "position_open_short",
  amount: "-3.5",
  balance: "100",
  fillFee: "-0.0021",
  cTimeMs: Date.UTC(2026, 6, 4, 23, 59, 59, 999),
  raw: {},
  ...over,
});

describe("the daily_rollups migration", () => {
  it("back-fills bills stored before it, and leaves the views' columns and types as they were", async () => {
    const sandbox = await startSandbox({ seed: 23, billCount: 2500, limits: null, accountEvolution: "manual" });
    try {
      // As a sync stored them then: this database is not yet migrated to symbol NULL.
      const truth = sandbox.truth();
      await storeBillsTheOldWay(db, "earlier", truth, truth.at(-1)!.cTimeMs);
    } finally {
      await sandbox.close();
    }
    const before = await viewColumns();
    expect(before.length).toBe(9 + 6 + 6 + 5);
    await migrateDeploy(database.url, { log: () => undefined });
    expect(await viewColumns()).toEqual(before);
    await createOldViews(db);
    await expectBooksAgree(db);
  });

  it("the views agree with their old definitions on ties, ids of different lengths, unknown types and scales", async () => {
    const t = Date.UTC(2026, 6, 5, 0, 0, 0, 0);
    const write = (account: string, bills: Bill[]) =>
      commitBillsWindow(db, { accountName: account, stream: "bills", cursorMs: t, bills, rejected: [], context: {} });
    // The latest USDT bill is "100" (same millisecond as "99", larger as a number, smaller as text).
    await write("edges", [
      bill("99", { cTimeMs: t, balance: "1.00" }),
      bill("100", { cTimeMs: t, balance: "2.5", businessType: "position_funding", fillFee: "0" }),
      bill("7", { coin: "USDC", symbol: "", businessType: "deposit", amount: "10.000", fillFee: "0" }),
      bill("8", { coin: "USDC", symbol: "", businessType: "position_adl", amount: "0.1", fillFee: "0" }),
      bill("9", { businessType: "order_fill_fee_income", amount: "0.00012345", fillFee: "0" }),
      bill("10", { businessType: "finish_liquidate", amount: "0", fillFee: "0" }),
      bill("11", { businessType: "position_close_long", amount: "7", fillFee: "-0.1" }),
    ]);
    await write("edges-2", [bill("1", { amount: "1.10" }), bill("2", { amount: "-1.1", cTimeMs: t + 1 })]);
    const [latest] = await db.$queryRawUnsafe<{ bill_id: string }[]>(
      "SELECT bill_id FROM v_balances WHERE account_name = 'edges' AND coin = 'USDT'",
    );
    expect(latest!.bill_id).toBe("100");
    await expectBooksAgree(db);
  });
});

describe("query plans of the BI views", () => {
  const plan = async (sql: string) =>
    (await db.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN ${sql}`)).map((r) => r["QUERY PLAN"]).join("\n");

  beforeAll(async () => {
    // 100,000 bills over 400 days, six symbols, eight types, two coins: enough for plans to matter.
    await insertBills(
      db,
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
      SELECT 'plans', (2000000000::bigint + g)::text, CASE WHEN g % 4 = 0 THEN 'USDC' ELSE 'USDT' END, 'cmt_s' || g % 6,
             (ARRAY['position_open_long', 'position_open_short', 'position_close_long', 'position_close_short',
                    'position_funding', 'order_fill_fee_income', 'start_liquidate', 'deposit'])[1 + g % 8],
             (g % 1000 - 500) / 100.0, g, -(g % 7) / 1000.0, timestamptz 'epoch' + t * interval '1 ms', t, '{}'
      FROM generate_series(1::bigint, 100000) g, LATERAL (SELECT ${Date.UTC(2025, 0, 1)}::bigint + g * 345600 AS t) x`,
    );
    await db.$executeRawUnsafe("ANALYZE");
  });

  it("v_daily_pnl for one month reads rollup_rows through an index (its key, or the day's BRIN)", async () => {
    for (const where of ["", "account_name = 'plans' AND "]) {
      const p = await plan(`SELECT * FROM v_daily_pnl WHERE ${where}day >= '2025-09-01' AND day < '2025-10-01'`);
      expect(p, p).toMatch(/(Index (Only )?Scan|Bitmap Index Scan) .*on rollup_rows/);
      // The names come from the small key tables; the rollups themselves are never read whole.
      expect(p, p).not.toMatch(/Seq Scan on rollup_rows/);
    }
  });

  it("v_balances answers from the index on bill_rows, with no Seq Scan of the bills", async () => {
    const p = await plan("SELECT * FROM v_balances");
    expect(p, p).toMatch(/Index (Only )?Scan .*on bill_rows_/);
    // A month of a few rows may be read whole (the planner's choice for a page or two); no month
    // that holds the bills is.
    const scanned = [...p.matchAll(/Seq Scan on (bill_rows\w*)/g)].map((m) => m[1]!);
    const big = await db.$queryRawUnsafe<{ relname: string }[]>(
      "SELECT relname::text FROM pg_class WHERE relname = ANY($1::text[]) AND (relname = 'bill_rows' OR reltuples > 100)",
      scanned,
    );
    expect(big, p).toEqual([]);
    await expectBooksAgree(db);
  });
});
