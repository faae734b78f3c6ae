// Applies one migration atomically: its script and its `_prisma_migrations` row commit together or
// not at all, so a failed migration leaves the database as it was and nothing to resolve.
// (Prisma's CLI runs the script outside a transaction and records a failed row instead.) A script
// must therefore not manage transactions itself, nor use statements that refuse to run in one
// (CREATE INDEX CONCURRENTLY, ALTER TYPE ... ADD VALUE before PostgreSQL 12).
import type pg from "pg";
import { describeDbError } from "./errors.ts";
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
