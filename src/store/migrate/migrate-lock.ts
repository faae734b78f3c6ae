// Concurrent migrates serialise on the PostgreSQL advisory lock Prisma's own `migrate deploy` takes
// (key 72707369, session level), so this runner and the Prisma CLI also wait for each other.
import type pg from "pg";

export const MIGRATE_LOCK_KEY = 72707369;
/** SQLSTATE lock_not_available: lock_timeout expired. */
const LOCK_NOT_AVAILABLE = "55P03";

/** Runs `work` holding the lock; waits at most `timeoutMs` for another holder to finish. */
export async function withMigrateLock<T>(
  client: pg.ClientBase,
  timeoutMs: number,
  log: (message: string) => void,
  work: () => Promise<T>,
): Promise<T> {
  const tried = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [
    MIGRATE_LOCK_KEY,
  ]);
  if (!tried.rows[0]?.locked) {
    log(`waiting for another migrate to finish (advisory lock ${MIGRATE_LOCK_KEY})`);
    await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    try {
      await client.query("SELECT pg_advisory_lock($1)", [MIGRATE_LOCK_KEY]);
    } catch (error) {
      if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
      throw new Error(
        `another migrate held the migration lock (advisory lock ${MIGRATE_LOCK_KEY}) for over ${timeoutMs} ms; ` +
          `see pg_locks for its holder`,
        { cause: error },
      );
    } finally {
      await client.query("RESET lock_timeout");
    }
  }
  try {
    return await work();
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATE_LOCK_KEY]);
  }
}
