// `ledger-sync migrate --status`: compares prisma/migrations with `_prisma_migrations`, as
// `prisma migrate status` does, without changing anything.
import { resolveOptions, type MigrateOptions } from "./options.ts";
import { withMigrationClient } from "./connection.ts";
import { readHistory } from "./history-table.ts";
import { describeProblems, planHistory } from "./history-plan.ts";
import { readMigrationsDir } from "./migrations-dir.ts";

export interface MigrationStatus {
  /** Migrations recorded as successfully applied in the database (including any missing locally). */
  applied: string[];
  /** Migrations of the directory not yet applied. */
  pending: string[];
  /** Failed, edited-after-apply, or applied-but-missing-locally migrations, one line each. */
  problems: string[];
}

export async function migrationStatus(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrationStatus> {
  const { migrationsDir } = resolveOptions(options);
  const migrations = await readMigrationsDir(migrationsDir);
  const plan = planHistory(migrations, await withMigrationClient(databaseUrl, readHistory));
  return {
    applied: plan.applied,
    pending: plan.pending.map((migration) => migration.name),
    problems: describeProblems(plan, migrationsDir),
  };
}
