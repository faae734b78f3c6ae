// Applies one migration inside the caller's transaction (migrate-lock.ts): its script and its
// `_prisma_migrations` row commit together or not at all, so a failed or killed migration leaves
// the database as it was and nothing to resolve. (Prisma's CLI runs the script outside a
// transaction and records a failed row instead.) A script must therefore not manage transactions
// itself, nor use statements that refuse to run in one (CREATE INDEX CONCURRENTLY, ALTER TYPE ...
// ADD VALUE before PostgreSQL 12).
import type pg from "pg";
import { describeDbError } from "./errors.ts";
import { HISTORY_TABLE, recordApplied } from "./history-table.ts";
import type { MigrationFile } from "./migrations-dir.ts";

export async function applyMigration(client: pg.ClientBase, migration: MigrationFile): Promise<void> {
  try {
    // No parameters: the simple query protocol, which runs a script of many statements.
    await client.query(migration.script);
    await recordApplied(client, migration.name, migration.checksum);
  } catch (error) {
    throw new Error(`migration ${migration.name} failed: ${describeDbError(error, migration.script)}`, {
      cause: error,
    });
  }
}

/** True when `name` is recorded as applied (read under the lock: another migrate may have applied it). */
export async function isApplied(client: pg.ClientBase, name: string): Promise<boolean> {
  const { rowCount } = await client.query(
    `SELECT 1 FROM "${HISTORY_TABLE}" WHERE migration_name = $1 AND finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    [name],
  );
  return (rowCount ?? 0) > 0;
}
