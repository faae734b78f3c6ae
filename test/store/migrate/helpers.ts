// Shared by the migration runner's tests: queries on a database URL, the committed migrations,
// and scratch copies of prisma/migrations to add, break or edit migrations in.
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const repo = fileURLToPath(new URL("../../../", import.meta.url));
export const migrationsDir = join(repo, "prisma/migrations");
export const schemaPath = join(repo, "prisma/schema.prisma");

import { queryOnce as query } from "../../support/query-once.ts";

export { query };

export async function committedMigrations(dir = migrationsDir): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

export interface ScratchMigrations {
  dir: string;
  /** Adds a migration directory with this script. */
  add(name: string, script: string): Promise<void>;
  remove(): Promise<void>;
}

/** A copy of prisma/migrations (or only its first `first` migrations) in a temporary directory. */
export async function scratchMigrations(first?: number): Promise<ScratchMigrations> {
  const dir = await mkdtemp(join(tmpdir(), "ls-migrations-"));
  await cp(migrationsDir, dir, { recursive: true });
  if (first !== undefined) {
    for (const name of (await committedMigrations(dir)).slice(first)) {
      await rm(join(dir, name), { recursive: true });
    }
  }
  return {
    dir,
    async add(name, script) {
      await mkdir(join(dir, name), { recursive: true });
      await writeFile(join(dir, name, "migration.sql"), script);
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface HistoryTableRow {
  id: string;
  checksum: string;
  migration_name: string;
  finished_at: Date | null;
  started_at: Date;
  rolled_back_at: Date | null;
  logs: string | null;
  applied_steps_count: number;
}

export function historyRows(url: string): Promise<HistoryTableRow[]> {
  return query<HistoryTableRow>(url, "SELECT * FROM _prisma_migrations ORDER BY migration_name, started_at");
}
