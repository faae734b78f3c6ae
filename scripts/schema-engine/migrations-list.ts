// Reads a migrations directory into the shape the schema engine expects, the same way the Prisma
// CLI does (so checksums and ordering match what `prisma migrate deploy` would see).
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { MigrationList } from "@prisma/schema-engine-wasm/schema_engine_bg";
import { DEFAULT_MIGRATIONS_DIR, LOCKFILE_NAME, MIGRATION_FILE_NAME } from "../../src/store/migrate/migrations-dir.ts";

export type { MigrationList };

export async function readMigrationsList(migrationsDir: string = DEFAULT_MIGRATIONS_DIR): Promise<MigrationList> {
  const baseDir = resolve(migrationsDir);
  const lockContent = await readFile(join(baseDir, LOCKFILE_NAME), "utf8").catch(() => null);
  const entries = await readdir(baseDir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  const migrationDirectories = await Promise.all(
    entries
      .filter((entry) => entry.isDirectory())
      .map(async (entry) => ({
        path: entry.name,
        migrationFile: {
          path: MIGRATION_FILE_NAME,
          // A missing/unreadable file is passed on as an error value, as the CLI does; the engine
          // then names the migration in its error.
          content: await readFile(join(baseDir, entry.name, MIGRATION_FILE_NAME), "utf8").then(
            (value) => ({ tag: "ok" as const, value }),
            (error: Error) => ({ tag: "error" as const, value: error.message }),
          ),
        },
      })),
  );
  // Same order as the CLI: migration names start with a timestamp.
  migrationDirectories.sort((a, b) => a.path.localeCompare(b.path));
  return {
    baseDir,
    lockfile: { path: LOCKFILE_NAME, content: lockContent },
    shadowDbInitScript: "",
    migrationDirectories,
  };
}
