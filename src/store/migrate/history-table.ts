// `_prisma_migrations`, the table in which Prisma records applied migrations. Created with the DDL
// Prisma itself uses and written row for row as `prisma migrate deploy` writes it, so either tool
// takes the other's history as its own.
import { randomUUID } from "node:crypto";
import type pg from "pg";

export const HISTORY_TABLE = "_prisma_migrations";

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "${HISTORY_TABLE}" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface HistoryRow {
  name: string;
  checksum: string;
  startedAt: Date;
  finishedAt: Date | null;
  rolledBackAt: Date | null;
}

export async function createHistoryTable(client: pg.ClientBase): Promise<void> {
  await client.query(CREATE_TABLE);
}

/** Every row, oldest first (as Prisma reads them); none when the table does not exist yet. */
export async function readHistory(client: pg.ClientBase): Promise<HistoryRow[]> {
  const exists = await client.query<{ table: string | null }>("SELECT to_regclass($1)::text AS table", [
    `"${HISTORY_TABLE}"`,
  ]);
  if (exists.rows[0]?.table === null) return [];
  const rows = await client.query<{
    migration_name: string;
    checksum: string;
    started_at: Date;
    finished_at: Date | null;
    rolled_back_at: Date | null;
  }>(
    `SELECT migration_name, checksum, started_at, finished_at, rolled_back_at
     FROM "${HISTORY_TABLE}"
     ORDER BY started_at, migration_name`,
  );
  return rows.rows.map((row) => ({
    name: row.migration_name,
    checksum: row.checksum,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    rolledBackAt: row.rolled_back_at,
  }));
}

/** Records a migration applied in the caller's transaction: started when the transaction began,
 *  finished now, one step, no logs (Prisma's row for a successful migration). */
export async function recordApplied(client: pg.ClientBase, name: string, checksum: string): Promise<void> {
  await client.query(
    `INSERT INTO "${HISTORY_TABLE}"
       (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
     VALUES ($1, $2, clock_timestamp(), $3, NULL, NULL, now(), 1)`,
    [randomUUID(), checksum, name],
  );
}
