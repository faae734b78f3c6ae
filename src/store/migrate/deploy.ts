// `ledger-sync migrate`: applies the pending migrations of prisma/migrations, each in its own
// transaction holding Prisma's migration lock (migrate-lock.ts: transaction-scoped, so safe
// through a transaction-mode pooler), recording them in `_prisma_migrations` as `prisma migrate
// deploy` does. It refuses, naming them, failed or edited migrations. Two at once apply each
// migration once: each one is looked up again under the lock before it is applied. Before each
// pending migration, and once all are applied, it runs the data step of every applied migration
// that has one and has not finished (data-step.ts): a step a killed migrate left half done resumes
// before the migration that needs it is applied. What a step holds (leases) is let go at the end.
import type pg from "pg";
import { resolveOptions, type MigrateOptions } from "./options.ts";
import { applyMigration, isApplied } from "./apply-migration.ts";
import { releaseDataSteps, runDataSteps, type DataStepRun } from "./data-step.ts";
import { withMigrationClient } from "./connection.ts";
import { createHistoryTable, readHistory } from "./history-table.ts";
import { describeProblems, planHistory } from "./history-plan.ts";
import { readMigrationsDir, type MigrationFile } from "./migrations-dir.ts";
import { inMigrateTransaction } from "./migrate-lock.ts";

export interface MigrateDeployResult {
  /** Names of the migrations this run applied, in order. */
  applied: string[];
  /** How many migrations of the directory were already applied before this run. */
  alreadyApplied: number;
}

export async function migrateDeploy(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrateDeployResult> {
  const { migrationsDir, log, lockTimeoutMs, dataSteps } = resolveOptions(options);
  const migrations = await readMigrationsDir(migrationsDir);
  log(`${migrations.length} migration${migrations.length === 1 ? "" : "s"} found in ${migrationsDir}`);
  return withMigrationClient(databaseUrl, async (client) => {
    await inMigrateTransaction(client, lockTimeoutMs, log, () => createHistoryTable(client));
    const plan = planHistory(migrations, await readHistory(client));
    const blocking = describeProblems({ ...plan, missingLocally: [] }, migrationsDir);
    if (blocking.length > 0) {
      throw new Error(`cannot deploy: ${blocking.join("; ")}. ${RESOLVE_HINT}`);
    }
    // A database migrated by a newer release: this one's migrations still apply.
    for (const problem of describeProblems({ ...plan, failed: [], edited: [] }, migrationsDir)) log(problem);
    const applied: string[] = [];
    const done = new Set(plan.applied);
    const ctx = { client, databaseUrl, log, lockTimeoutMs };
    const steps: DataStepRun = { holds: [], ran: new Set() };
    try {
      for (const migration of plan.pending) {
        await runDataSteps(dataSteps, done, ctx, steps);
        if (await applyPending(client, migration, lockTimeoutMs, log)) applied.push(migration.name);
        done.add(migration.name);
      }
      await runDataSteps(dataSteps, done, ctx, steps);
    } finally {
      await releaseDataSteps(steps);
    }
    if (plan.pending.length === 0) log("no pending migrations to apply");
    return { applied, alreadyApplied: migrations.length - applied.length };
  });
}

/** Applies one migration under the lock unless another migrate did meanwhile; true when this one did. */
async function applyPending(
  client: pg.ClientBase,
  migration: MigrationFile,
  lockTimeoutMs: number,
  log: (message: string) => void,
): Promise<boolean> {
  const done = await inMigrateTransaction(client, lockTimeoutMs, log, async () => {
    if (await isApplied(client, migration.name)) return false;
    await applyMigration(client, migration);
    return true;
  });
  log(
    done
      ? `applied migration ${migration.name}`
      : `migration ${migration.name} was applied by another migrate meanwhile`,
  );
  return done;
}

const RESOLVE_HINT =
  "A failed migration (left by another tool) must be resolved first: undo what it applied, then mark it " +
  "rolled back (`prisma migrate resolve --rolled-back <name>`, or set its rolled_back_at in _prisma_migrations). " +
  "An applied migration must never be edited: restore its migration.sql and put the change in a new migration";
