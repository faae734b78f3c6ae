// What the migrations directory and `_prisma_migrations` say together, by Prisma's rules: a row
// rolled back (`prisma migrate resolve --rolled-back`) counts as never applied; a row never
// finished is a failed migration that blocks deploys; an applied migration whose file no longer
// has its checksum was edited after it ran.
import { matchesChecksum } from "./checksum.ts";
import type { HistoryRow } from "./history-table.ts";
import type { MigrationFile } from "./migrations-dir.ts";

export interface HistoryPlan {
  /** Applied and finished, including any the directory no longer has; sorted by name. */
  applied: string[];
  /** In the directory, not applied: what a deploy runs, in order. */
  pending: MigrationFile[];
  failed: string[];
  edited: string[];
  missingLocally: string[];
}

export function planHistory(migrations: MigrationFile[], history: HistoryRow[]): HistoryPlan {
  const live = history.filter((row) => row.rolledBackAt === null);
  const finished = live.filter((row) => row.finishedAt !== null);
  const local = new Map(migrations.map((migration) => [migration.name, migration]));
  const recorded = new Set(live.map((row) => row.name));
  const edited = new Set<string>();
  for (const row of finished) {
    const file = local.get(row.name);
    if (file && !matchesChecksum(file.script, row.checksum)) edited.add(row.name);
  }
  const unique = (names: string[]) => [...new Set(names)].sort();
  return {
    applied: unique(finished.map((row) => row.name)),
    pending: migrations.filter((migration) => !recorded.has(migration.name)),
    failed: unique(live.filter((row) => row.finishedAt === null).map((row) => row.name)),
    edited: [...edited].sort(),
    missingLocally: unique(finished.map((row) => row.name).filter((name) => !local.has(name))),
  };
}

/** One line per problem, naming the migration (status and deploy say the same). */
export function describeProblems(plan: HistoryPlan, migrationsDir: string): string[] {
  return [
    ...plan.failed.map(
      (name) => `migration ${name} failed: it is recorded as failed in _prisma_migrations and blocks deploys`,
    ),
    ...plan.edited.map(
      (name) => `migration ${name} was edited after it was applied (checksum differs from the database)`,
    ),
    ...plan.missingLocally.map(
      (name) => `migration ${name} is applied to the database but missing from ${migrationsDir}`,
    ),
  ];
}
