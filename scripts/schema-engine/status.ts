// The engine's `prisma migrate status` (for the runner's compatibility tests): which migrations the database has, which are pending, and what is wrong.
import { cleanEngineMessage } from "./engine-errors.ts";
import { DEFAULT_MIGRATIONS_DIR } from "../../src/store/migrate/migrations-dir.ts";
import { readMigrationsList } from "./migrations-list.ts";
import { NO_FILTERS, type MigrateOptions } from "./options.ts";
import { withMigrationEngine } from "./session.ts";

export interface MigrationStatus {
  /** Migrations recorded as successfully applied in the database (including any missing locally). */
  applied: string[];
  /** Migrations of the directory not yet applied. */
  pending: string[];
  /** Failed, edited-after-apply, or applied-but-missing-locally migrations, one line each. */
  problems: string[];
}

export async function engineStatus(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrationStatus> {
  const migrationsDir = options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR;
  const migrationsList = await readMigrationsList(migrationsDir);
  const diagnosis = await withMigrationEngine(databaseUrl, undefined, ({ engine }) =>
    // No shadow database: like `prisma migrate status`, this only compares histories.
    engine
      .diagnoseMigrationHistory({ migrationsList, optInToShadowDatabase: false, filters: NO_FILTERS })
      .catch((error: unknown) => {
        throw new Error(cleanEngineMessage(error), { cause: error });
      }),
  );
  const history = diagnosis.history;
  const pending = history && "unappliedMigrationNames" in history ? history.unappliedMigrationNames : [];
  const missingLocally = history && "unpersistedMigrationNames" in history ? history.unpersistedMigrationNames : [];
  // The engine reports differences only; the applied set is what remains of both histories.
  const notApplied = new Set([...pending, ...diagnosis.failedMigrationNames]);
  const local = migrationsList.migrationDirectories.map((dir) => dir.path);
  const applied = [...new Set([...local, ...missingLocally])].filter((name) => !notApplied.has(name)).sort();

  const problems = [
    ...diagnosis.failedMigrationNames.map(
      (name) => `migration ${name} failed: it is recorded as failed in _prisma_migrations and blocks deploys`,
    ),
    ...diagnosis.editedMigrationNames.map(
      (name) => `migration ${name} was edited after it was applied (checksum differs from the database)`,
    ),
    ...missingLocally.map((name) => `migration ${name} is applied to the database but missing from ${migrationsDir}`),
  ];
  return { applied, pending, problems };
}
