// Turns the schema engine's errors into messages a person can act on.
import { describeDbError } from "../../src/store/migrate/errors.ts";
import type { ScriptFailure } from "./adapter.ts";
import type { MigrationList } from "./migrations-list.ts";

/**
 * The engine's message without its "external connector error" header and Rust span trace
 * ("   0: sql_schema_connector::..."), prefixed with its Prisma error code when it has one.
 */
export function cleanEngineMessage(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  const lines = raw.split("\n");
  const traceStart = lines.findIndex((line) => /^\s*\d+: \S/.test(line));
  const kept = (traceStart === -1 ? lines : lines.slice(0, traceStart)).filter(
    (line) => line.trim() !== "" && line.trim() !== "external connector error",
  );
  const code = (error as { code?: unknown } | null)?.code;
  const message = kept.join("\n") || raw;
  return typeof code === "string" && code !== "" ? `${code}: ${message}` : message;
}

/**
 * The error of a command that runs migration scripts: when a migration's SQL failed, says which
 * one and what the database said ("migration 20261121_init failed: ..."); otherwise the engine's
 * message, cleaned. `where` qualifies the database, e.g. "on the shadow database".
 */
export function migrationFailure(
  error: unknown,
  migrations: MigrationList,
  failure: ScriptFailure | undefined,
  where = "",
): Error {
  const suffix = where ? ` ${where}` : "";
  if (failure) {
    const failed = migrations.migrationDirectories.find(
      (dir) => dir.migrationFile.content.tag === "ok" && dir.migrationFile.content.value === failure.script,
    );
    const name = failed?.path ?? /migration_name="([^"]+)"/.exec(String(error))?.[1];
    if (name) {
      return new Error(`migration ${name} failed${suffix}: ${describeDbError(failure.error, failure.script)}`, {
        cause: error,
      });
    }
  }
  return new Error(cleanEngineMessage(error), { cause: error });
}
