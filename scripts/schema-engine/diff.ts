// `prisma migrate diff --from-migrations --to-schema --script`: the SQL a new migration needs.
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { DiffTarget } from "@prisma/schema-engine-wasm/schema_engine_bg";
import { migrationFailure } from "./engine-errors.ts";
import { DEFAULT_MIGRATIONS_DIR } from "../../src/store/migrate/migrations-dir.ts";
import { readMigrationsList } from "./migrations-list.ts";
import { NO_FILTERS, type MigrateOptions } from "./options.ts";
import { withMigrationEngine } from "./session.ts";

// What the engine prints, as SQL, when the two sides are the same.
const EMPTY_SCRIPT = "-- This is an empty migration.";

/**
 * SQL that takes the database state produced by the migrations to the datamodel in schemaPath;
 * "" when nothing to do. The engine replays the migrations on a shadow database it creates (and
 * we drop) on the server of `databaseUrl`; the database itself is not touched.
 */
export async function diffMigrationsToSchema(
  databaseUrl: string,
  schemaPath: string,
  options: MigrateOptions = {},
): Promise<string> {
  const migrationsList = await readMigrationsList(options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR);
  const path = resolve(schemaPath);
  const content = await readFile(path, "utf8");
  // From "empty" when there is no migration yet: nothing to replay, no shadow database needed.
  const from: DiffTarget =
    migrationsList.migrationDirectories.length > 0 ? { tag: "migrations", ...migrationsList } : { tag: "empty" };
  const result = await withMigrationEngine(databaseUrl, [[path, content]], ({ engine, adapter }) =>
    engine
      .diff({
        from,
        to: { tag: "schemaDatamodel", files: [{ path, content }] },
        script: true,
        exitCode: null,
        filters: NO_FILTERS,
      })
      .catch((error: unknown) => {
        throw migrationFailure(error, migrationsList, adapter.lastScriptFailure, "on the shadow database");
      }),
  );
  const script = result.stdout ?? "";
  return script.trim() === "" || script.trim() === EMPTY_SCRIPT ? "" : script;
}
