// The project's migration runner (src/store/migrate) against real PostgreSQL: what it applies and
// records, and what it refuses. Its compatibility with Prisma's own engine is migrate-compat.test.ts.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDeploy, migrationStatus } from "../../../src/store/migrate/index.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { committedMigrations, historyRows, migrationsDir, query } from "./helpers.ts";

describe("migrations of prisma/schema.prisma", () => {
  let db: TestDatabase;
  let names: string[];

  beforeAll(async () => {
    db = await createTestDatabase("ls_migrate");
    names = await committedMigrations();
    expect(names.length).toBeGreaterThanOrEqual(2);
    expect(names[0]).toMatch(/^\d{14}_init$/);
    expect(names[1]).toMatch(/^\d{14}_snapshots$/);
    expect(names[2]).toMatch(/^\d{14}_bi_views$/);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("reports every migration as pending on an empty database", async () => {
    const status = await migrationStatus(db.url);
    expect(status).toEqual({ applied: [], pending: names, problems: [] });
  });

  it("deploys onto an empty database and records it as the Prisma CLI does", async () => {
    const messages: string[] = [];
    const result = await migrateDeploy(db.url, { log: (m) => messages.push(m) });
    expect(result).toEqual({ applied: names, alreadyApplied: 0 });
    for (const name of names) expect(messages.join("\n")).toContain(name);

    const tables = await query<{ table_name: string }>(
      db.url,
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
         AND table_name NOT IN (SELECT inhrelid::regclass::text FROM pg_inherits) ORDER BY table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      "_prisma_migrations",
      "account_keys",
      "account_snapshots",
      "accounts",
      "archived_month_edges",
      "archived_months",
      "bill_coins",
      "bill_forms",
      "bill_id_ranges",
      "bill_revisions",
      "bill_rows",
      "bill_rows_upgrade",
      "bill_terms",
      "bills_run_stats",
      "close_seals",
      "collateral_current",
      "collateral_history",
      "compacted_months",
      "exchange_profiles",
      "fee_settings",
      "legal_holds",
      "leverage_settings",
      "mode_settings",
      "period_close_bills",
      "period_closes",
      "position_history",
      "positions_current",
      "quarantine",
      "restore_drills",
      "rollup_rows",
      "run_leases",
      "sync_runs",
      "sync_schedule",
      "sync_state",
      "verify_state",
      "wallet_checks",
      "wallet_readings",
    ]);
    const views = await query<{ table_name: string }>(
      db.url,
      "SELECT table_name FROM information_schema.views WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(views.map((v) => v.table_name)).toEqual([
      "bills",
      "daily_rollups",
      "ledger_bills",
      "v_balances",
      "v_daily_pnl",
      "v_fees",
      "v_funding",
      "v_positions_open",
      "v_transfers",
    ]);

    // Decimal @db.Decimal must be unconstrained NUMERIC: a precision/scale would round and pad.
    const numerics = await query<{
      table_name: string;
      column_name: string;
      numeric_precision: number | null;
      numeric_scale: number | null;
    }>(
      db.url,
      `SELECT table_name, column_name, numeric_precision, numeric_scale FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type = 'numeric' ORDER BY table_name, column_name`,
    );
    // Every amount is unconstrained; only the match sequence ids are NUMERIC(39,0) (whole numbers).
    expect(numerics.length).toBeGreaterThan(50);
    for (const n of numerics) {
      const sequence = n.column_name.endsWith("_match_sequence_id");
      expect(n, `${n.table_name}.${n.column_name}`).toMatchObject(
        sequence ? { numeric_precision: 39, numeric_scale: 0 } : { numeric_precision: null, numeric_scale: null },
      );
    }
    expect(
      numerics
        .filter((n) => ["bills", "bill_revisions"].includes(n.table_name))
        .map((n) => n.column_name)
        .sort(),
    ).toEqual(["amount", "amount", "balance", "balance", "fill_fee", "fill_fee"]);

    const rows = await historyRows(db.url);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const sql = await readFile(join(migrationsDir, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(sql).digest("hex"));
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it("is a no-op the second time", async () => {
    const before = await query(db.url, "SELECT id, finished_at FROM _prisma_migrations");
    expect(await migrateDeploy(db.url)).toEqual({ applied: [], alreadyApplied: names.length });
    expect(await query(db.url, "SELECT id, finished_at FROM _prisma_migrations")).toEqual(before);
  });

  it("reports nothing pending once deployed", async () => {
    expect(await migrationStatus(db.url)).toEqual({ applied: names, pending: [], problems: [] });
  });

  it("enforces digits-only bill ids with a CHECK constraint", async () => {
    const insert = `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
                    VALUES ('acct', $1, 'USDT', 'BTCUSDT', 'trade', 1, 2, 0, now(), 0, '{}')`;
    await query(db.url, insert, ["686960019383517338"]);
    await expect(query(db.url, insert, ["12a"])).rejects.toMatchObject({
      code: "23514",
      constraint: "bill_rows_bill_id_digits",
    });
    const revision = `INSERT INTO bill_revisions (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw, first_seen_at)
                      VALUES ('acct', $1, 'USDT', 'BTCUSDT', 'trade', 1, 2, 0, now(), 0, '{}', now())`;
    await expect(query(db.url, revision, ["-1"])).rejects.toMatchObject({
      code: "23514",
      constraint: "bill_revisions_bill_id_digits",
    });
  });

  it("keeps the exchange's decimal text exactly", async () => {
    const [row] = await query<{ amount: string }>(
      db.url,
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
       VALUES ('acct', '2', 'USDT', 'BTCUSDT', 'trade', '0.000000000000000000000000000000000001234567890123456789', 2, 0, now(), 0, '{}')
       RETURNING amount::text`,
    );
    expect(row!.amount).toBe("0.000000000000000000000000000000000001234567890123456789");
  });
});
