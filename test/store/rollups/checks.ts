// What the rollup tests check after every kind of write: daily_rollups equals the same GROUP BY
// over bills, and each BI view returns, row for row and digit for digit (numerics as text, scale
// included), what its old definition returns over the same bills.
import { expect } from "vitest";
import type { Db } from "../../../src/store/prisma.ts";
import { oldViewsSql, ROLLUP_VIEWS } from "./before-rollups.ts";

async function textRows(db: Db, sql: string): Promise<string[]> {
  return (await db.$queryRawUnsafe<{ row: string }[]>(sql)).map((r) => r.row);
}

/** Creates `<view>_before` for each view the rollups serve, as bi_views defined it. */
export async function createOldViews(db: Db): Promise<void> {
  for (const sql of await oldViewsSql()) await db.$executeRawUnsafe(sql);
}

export async function expectRollupsMatchBills(db: Db): Promise<void> {
  const stored = await textRows(
    db,
    `SELECT ROW(account_name, day, coin, symbol, business_type, bills, amount, fill_fee)::text AS row
     FROM daily_rollups ORDER BY 1`,
  );
  const recomputed = await textRows(
    db,
    `SELECT ROW(account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type, count(*), sum(amount), sum(fill_fee))::text AS row
     FROM bills GROUP BY account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type ORDER BY 1`,
  );
  expect(stored.length).toBeGreaterThan(0);
  expect(stored).toEqual(recomputed);
}

export async function expectViewsMatchOldDefinitions(db: Db): Promise<void> {
  for (const view of ROLLUP_VIEWS) {
    const now = await textRows(db, `SELECT v::text AS row FROM ${view} v ORDER BY 1`);
    const before = await textRows(db, `SELECT v::text AS row FROM ${view}_before v ORDER BY 1`);
    expect(now.length, view).toBeGreaterThan(0);
    expect(now, view).toEqual(before);
  }
}

/** Both checks at once: what every test asserts after it wrote. */
export async function expectBooksAgree(db: Db): Promise<void> {
  await expectRollupsMatchBills(db);
  await expectViewsMatchOldDefinitions(db);
}
