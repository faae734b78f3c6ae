// daily_rollups and the database roles, on real PostgreSQL: a role that may write bills and
// nothing else (docs/security.md's worker has no grant on daily_rollups or rollup_rows) stores and revises bills,
// and the triggers, running as the tables' owner, keep the rollups; that role cannot write
// daily_rollups itself, directly or through the functions the triggers use.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { expectRollupsMatchBills } from "./checks.ts";

const ROLE = `ls_rollup_writer_${randomBytes(4).toString("hex")}`;
let t: MigratedDb;
let writer: pg.Client;
beforeAll(async () => {
  t = await createMigratedDb();
  await t.db.$executeRawUnsafe(`CREATE ROLE "${ROLE}" LOGIN PASSWORD 'rollups'`);
  await t.db.$executeRawUnsafe(`GRANT CONNECT ON DATABASE "${t.name}" TO "${ROLE}"`);
  await t.db.$executeRawUnsafe(`GRANT USAGE ON SCHEMA public TO "${ROLE}"`);
  await t.db.$executeRawUnsafe(`GRANT SELECT, INSERT, UPDATE ON bills, bill_revisions TO "${ROLE}"`);
  await t.db.$executeRawUnsafe(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "${ROLE}"`);
  const url = new URL(t.url);
  url.username = ROLE;
  url.password = "rollups";
  writer = new pg.Client({ connectionString: url.toString() });
  await writer.connect();
});
afterAll(async () => {
  await writer.end();
  await t.db.$executeRawUnsafe(`DROP OWNED BY "${ROLE}"`);
  await t.close();
  const admin = new pg.Client({ connectionString: inject("adminDatabaseUrl") });
  await admin.connect();
  await admin.query(`DROP ROLE IF EXISTS "${ROLE}"`);
  await admin.end();
});

describe("daily_rollups and the roles", () => {
  it("a role without a grant on daily_rollups writes and revises bills, and the rollups follow", async () => {
    await writer.query(
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
       VALUES ('w', '1', 'USDT', 'cmt_btcusdt', 'position_funding', 1.25, 1.25, 0, '2026-05-01T08:00Z', 1777622400000, '{}'),
              ('w', '2', 'USDT', 'cmt_btcusdt', 'position_funding', 0.5, 1.75, 0, '2026-05-01T16:00Z', 1777651200000, '{}')`,
    );
    await writer.query(
      `WITH path AS (SELECT set_config('ledger_sync.revision', 'on', true))
       UPDATE bills SET amount = 0.75 FROM path WHERE account_name = 'w' AND bill_id = '2'`,
    );
    const rows = await t.db.$queryRawUnsafe<{ bills: string; amount: string }[]>(
      "SELECT bills::text, amount::text FROM daily_rollups WHERE account_name = 'w'",
    );
    expect(rows).toEqual([{ bills: "2", amount: "2.00" }]);
    await expectRollupsMatchBills(t.db);
  });

  it("that role cannot write daily_rollups or rollup_rows, directly or through the triggers' functions", async () => {
    await expect(
      writer.query(
        `INSERT INTO daily_rollups (account_name, day, coin, symbol, business_type, category, bills, amount, fill_fee)
         VALUES ('w', '2026-05-02', 'USDT', '', 'deposit', 'other', 1, 100, 0)`,
      ),
    ).rejects.toThrow(/cannot insert into view "daily_rollups"/);
    await expect(
      writer.query(
        `INSERT INTO rollup_rows (account_id, day, coin, symbol, business_type, bills, amount, fill_fee)
         VALUES (1, '2026-05-02', 1, NULL, 1, 1, 100, 0)`,
      ),
    ).rejects.toThrow(/permission denied for table rollup_rows/);
    await expect(
      writer.query(`SELECT ledger_sync_rollups_settle(ARRAY[ROW(1, '2026-05-01', 1, 2, 3, 5, 100, 0)::rollup_rows])`),
    ).rejects.toThrow(/permission denied for table rollup_rows/);
    await expectRollupsMatchBills(t.db);
  });
});
