// Applies one migration atomically: its script and its `_prisma_migrations` row commit together or
// not at all, so a failed migration leaves the database as it was and nothing to resolve.
// (Prisma's CLI runs the script outside a transaction and records a failed row instead.) A script
// must therefore not manage transactions itself, nor use statements that refuse to run in one
// (CREATE INDEX CONCURRENTLY, ALTER TYPE ... ADD VALUE before PostgreSQL 12).
import type pg from "pg";
import { recordApplied } from "./history-table.ts";
import type { MigrationFile } from "./migrations-dir.ts";

export async function applyMigration(client: pg.ClientBase, migration: MigrationFile): Promise<void> {
  await client.query("BEGIN");
  try {
    // No parameters: the simple query protocol, which runs a script of many statements.
    await client.query(migration.script);
    await recordApplied(client, migration.name, migration.checksum);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw new Error(`migration ${migration.name} failed: ${describeDbError(error, migration.script)}`, {
      cause: error,
    });
  }
}

/** 'column "x" does not exist (SQLSTATE 42703, line 2)' from a pg error raised by `script`. */
function describeDbError(error: unknown, script: string): string {
  if (!(error instanceof Error)) return String(error);
  const pgError = error as Error & { code?: string; position?: string };
  const details: string[] = [];
  if (pgError.code) details.push(`SQLSTATE ${pgError.code}`);
  const position = Number(pgError.position);
  if (Number.isInteger(position) && position > 0) {
    details.push(`line ${script.slice(0, position - 1).split("\n").length}`);
  }
  return details.length > 0 ? `${pgError.message} (${details.join(", ")})` : pgError.message;
}
