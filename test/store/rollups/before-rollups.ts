// The books as they were before daily_rollups, for the rollup tests and the `rollups` bench item: a
// database migrated up to just before the migration that adds it, and the four BI views' old
// definitions, read from the bi_views migration (applied migrations never change, so this is the
// SQL that was deployed).
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { DEFAULT_MIGRATIONS_DIR, MIGRATION_FILE_NAME } from "../../../src/store/migrate/migrations-dir.ts";
import { migrateBefore } from "../../support/migrate-before.ts";

export const ROLLUPS_MIGRATION = "20261124212832_daily_rollups";
export const ROLLUP_VIEWS = ["v_daily_pnl", "v_funding", "v_fees", "v_balances"] as const;

/** Applies the migrations that come before daily_rollups; a later migrateDeploy applies the rest. */
export async function migrateBeforeRollups(databaseUrl: string): Promise<void> {
  await migrateBefore(databaseUrl, ROLLUPS_MIGRATION);
}

/** CREATE VIEW statements of the four views as bi_views made them, each renamed `<view>_before`. */
export async function oldViewsSql(): Promise<string[]> {
  const name = (await readdir(DEFAULT_MIGRATIONS_DIR)).find((n) => n.endsWith("_bi_views"));
  if (!name) throw new Error("no bi_views migration");
  const script = await readFile(join(DEFAULT_MIGRATIONS_DIR, name, MIGRATION_FILE_NAME), "utf8");
  return ROLLUP_VIEWS.map((view) => {
    const statement = new RegExp(`CREATE VIEW "${view}" AS\\n[^;]*;`).exec(script)?.[0];
    if (!statement) throw new Error(`${view} is not in ${name}`);
    return statement.replace(`"${view}"`, `"${view}_before"`);
  });
}
