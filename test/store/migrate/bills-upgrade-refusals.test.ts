// Bills the upgrade refuses to copy, by name, having written nothing of them: an id with a leading
// zero (bill_rows keeps ids as NUMERIC, which would give "0123" back as "123"), found before the
// copy starts or in the batch that reaches it; and a bill whose created_at and created_at_ms differ
// (bill_rows keeps one time); and a bill of a month bill_rows makes no partition for.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dataSteps } from "../../../src/store/migrate/data-steps.ts";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { insertOldBills, migrateToOldSchema, MONTH_MS, withClient } from "./old-books.ts";

const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );

async function addBill(url: string, account: string, id: string, at: string, ms?: number): Promise<void> {
  await withClient(url, (c) =>
    c.query(
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
                          created_at_ms, raw, source)
       SELECT $1, $2, 'USDT', NULL, 'deposit', 1, 1, 0, $3::timestamptz,
              coalesce($4::bigint, (extract(epoch FROM $3::timestamptz) * 1000)::bigint),
              jsonb_build_object('billId', $2::text), 'v2'`,
      [account, id, at, ms ?? null],
    ),
  );
}

const state = (url: string) =>
  withClient(url, async (c) => {
    const { rows } = await c.query<{ copied: number; rows: number; progress: number; kind: string; swapped: boolean }>(
      `SELECT (SELECT coalesce(sum(copied), 0)::int FROM bill_rows_upgrade) AS copied,
              (SELECT count(*)::int FROM bill_rows) AS rows, (SELECT count(*)::int FROM bill_rows_upgrade) AS progress,
              (SELECT relkind::text FROM pg_class WHERE oid = 'bills'::regclass) AS kind,
              EXISTS (SELECT 1 FROM _prisma_migrations WHERE migration_name LIKE '%_bills_view') AS swapped`,
    );
    return rows[0]!;
  });

describe("the bills upgrade refuses, by name", () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase("ls_upgrade_refusals");
    await migrateToOldSchema(db.url);
    await withClient(db.url, (c) =>
      insertOldBills(c, { name: "plain", bills: 300, fromMs: MONTH_MS(2026, 1), stepMs: 3_600_000, source: "v2" }),
    );
  });
  afterEach(async () => {
    await db.drop();
  });

  it("a bill id with a leading zero, before anything is copied", async () => {
    await addBill(db.url, "zeros", "0123", "2026-02-01T00:00:00Z");
    const error = await failureOf(migrateDeploy(db.url, { dataSteps: dataSteps({ batchSize: 50 }) }));
    expect(error?.message).toContain('bill 0123 of account "zeros" has a leading zero');
    expect(await state(db.url)).toEqual({ copied: 0, rows: 0, progress: 0, kind: "r", swapped: false });
    // Still refused on the next run.
    const again = await failureOf(migrateDeploy(db.url, { dataSteps: dataSteps({ batchSize: 50 }) }));
    expect(again?.message).toContain('bill 0123 of account "zeros"');
  });

  it("a bill id with a leading zero written after the copy started: in the batch that reaches it", async () => {
    let batches = 0;
    const stopped = await failureOf(
      migrateDeploy(db.url, {
        dataSteps: dataSteps({
          batchSize: 50,
          beforeCommit: () => {
            if (++batches === 3) throw new Error("stopped (test)");
          },
        }),
      }),
    );
    expect(stopped?.message).toBe("stopped (test)");
    expect(await state(db.url)).toMatchObject({ copied: 100, rows: 100, kind: "r" });
    await addBill(db.url, "plain", "007", "2026-01-09T00:00:00.001Z");
    const error = await failureOf(migrateDeploy(db.url, { dataSteps: dataSteps({ batchSize: 50 }) }));
    expect(error?.message).toContain('bill 007 of account "plain" has a leading zero');
    // The batches before it were copied; the one holding it was not.
    const s = await state(db.url);
    expect(s.copied).toBe(s.rows);
    expect(s.rows % 50).toBe(0);
    expect(s.rows).toBeLessThan(301);
    expect(s).toMatchObject({ kind: "r", swapped: false });
  });

  it("a bill of a month no partition is made for (years ahead), in the batch that reaches it", async () => {
    await addBill(db.url, "ahead", "42", "2040-05-06T07:08:09Z");
    const error = await failureOf(migrateDeploy(db.url, { dataSteps: dataSteps({ batchSize: 50 }) }));
    expect(error?.message).toContain(
      'account "ahead" has bills from 2040-05-06 to 2040-05-06: no partition for bills of 2040-05',
    );
    const s = await state(db.url);
    expect(s).toMatchObject({ kind: "r", swapped: false });
    expect(s.copied).toBe(s.rows);
  });

  it("a bill whose created_at is not its created_at_ms", async () => {
    await addBill(db.url, "times", "77", "2026-03-01T00:00:00Z", Date.UTC(2026, 2, 1) + 1);
    const error = await failureOf(migrateDeploy(db.url, { dataSteps: dataSteps({ batchSize: 50 }) }));
    expect(error?.message).toContain(
      'bill 77 (created_at 2026-03-01T00:00:00.000Z, created_at_ms 1772323200001) of account "times" has two different times',
    );
    expect(await state(db.url)).toEqual({ copied: 0, rows: 0, progress: 0, kind: "r", swapped: false });
  });
});
