// Concurrent migrates serialise on the advisory lock Prisma's own `migrate deploy` takes (key
// 72707369), so this runner and the Prisma CLI also wait for each other. It is taken per
// transaction (pg_advisory_xact_lock), never per session: through a transaction-mode pooler a
// session lock lands on whichever server connection the pooler lent, and may outlive the migrate
// or be granted again to another client of that connection. Every transaction that changes the
// schema takes it first, and it ends with the transaction: a killed migrate leaves neither a
// half-applied migration nor a lock behind.
import type pg from "pg";

export const MIGRATE_LOCK_KEY = 72707369;
/** SQLSTATE lock_not_available: lock_timeout expired. */
const LOCK_NOT_AVAILABLE = "55P03";

/**
 * Runs `work` in one transaction holding the lock, committed when it returns and rolled back when
 * it throws; waits at most `timeoutMs` for another holder to finish.
 */
export async function inMigrateTransaction<T>(
  client: pg.ClientBase,
  timeoutMs: number,
  log: (message: string) => void,
  work: () => Promise<T>,
): Promise<T> {
  await client.query("BEGIN");
  try {
    const tried = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [
      MIGRATE_LOCK_KEY,
    ]);
    if (!tried.rows[0]?.locked) {
      log(`waiting for another migrate to finish (advisory lock ${MIGRATE_LOCK_KEY})`);
      await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
      try {
        await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATE_LOCK_KEY]);
      } catch (error) {
        if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
        throw new Error(
          `another migrate held the migration lock (advisory lock ${MIGRATE_LOCK_KEY}) for over ${timeoutMs} ms; ` +
            `see pg_locks for its holder`,
          { cause: error },
        );
      }
      // The migrations' own statements wait for their locks as they would anywhere.
      await client.query("SET LOCAL lock_timeout TO DEFAULT");
    }
    const result = await work();
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}
