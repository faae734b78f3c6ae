// The engine's `prisma migrate deploy` (for the runner's compatibility tests): apply the pending migrations of a migrations directory, recording them
// in `_prisma_migrations` exactly as the CLI does (the engine itself writes that table).
import { migrationFailure } from "./engine-errors.ts";
import { DEFAULT_MIGRATIONS_DIR } from "../../src/store/migrate/migrations-dir.ts";
import { readMigrationsList } from "./migrations-list.ts";
import { NO_FILTERS, type MigrateOptions } from "./options.ts";
import { withMigrationEngine } from "./session.ts";

export interface MigrateDeployResult {
  /** Names of the migrations this run applied, in order. */
  applied: string[];
  /** How many migrations of the directory were already applied before this run. */
  alreadyApplied: number;
}

export async function engineDeploy(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrateDeployResult> {
  const log = options.log ?? (() => {});
  const migrationsDir = options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR;
  const migrationsList = await readMigrationsList(migrationsDir);
  const total = migrationsList.migrationDirectories.length;
  log(`${total} migration${total === 1 ? "" : "s"} found in ${migrationsDir}`);
  const { appliedMigrationNames } = await withMigrationEngine(databaseUrl, undefined, ({ engine, adapter }) =>
    engine.applyMigrations({ migrationsList, filters: NO_FILTERS }).catch((error: unknown) => {
      throw migrationFailure(error, migrationsList, adapter.lastScriptFailure);
    }),
  );
  for (const name of appliedMigrationNames) log(`applied migration ${name}`);
  if (appliedMigrationNames.length === 0) log("no pending migrations to apply");
  return { applied: appliedMigrationNames, alreadyApplied: total - appliedMigrationNames.length };
}
