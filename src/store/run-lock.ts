// One writer per account and stream group, across every process and command: a PostgreSQL
// session advisory lock. An inline command holds it on a connection of its own for the whole run
// (acquireRunLock below); the worker holds all its jobs' locks on one shared session
// (lock-session.ts), so hundreds of running jobs do not each keep a connection open. It needs no
// Redis (the inline commands take it), and PostgreSQL releases it when the holder's connection
// ends, so a killed process never leaves it held. Once held, any sync_runs row of the group still
// "running" is a run whose end was never recorded (its process died, or lost the database): it is
// marked interrupted. The keys and statements live here once, for both holders: the two must
// contend for exactly the same lock.
import pg from "pg";

/** What a lock covers: the bills streams (incremental, backfill windows, repairs) or the snapshots. */
export type RunLockGroup = "bills" | "snapshots";

// The advisory lock's first key: a constant per group (0x4c53 "LS" and a group number), so the
// second key, hashtext(account), cannot meet another application's locks by accident.
const GROUP_KEY: Record<RunLockGroup, number> = { bills: 0x4c530001, snapshots: 0x4c530002 };
/** sync_runs streams each group covers (LIKE patterns). */
const GROUP_STREAMS: Record<RunLockGroup, string[]> = {
  bills: ["bills", "bills-%"],
  snapshots: ["snapshots", "snapshots-%"],
};
/** The order several groups are taken in (so two runs never wait on each other crosswise). */
const GROUP_ORDER: readonly RunLockGroup[] = ["bills", "snapshots"];
/** What a run taking the lock says when it marked runs interrupted (the CLI and the worker log it). */
export const INTERRUPTED_RUNS_MESSAGE =
  "runs of this account whose end was never recorded (their process ended, or lost the database) " +
  "are marked interrupted";
/** The error recorded on a run marked interrupted (unless it recorded one of its own). */
const INTERRUPTED_RUN_ERROR =
  "its end was never recorded: the process ended, or lost the database (found by the next run of the account)";
/** How often a waiting run asks again. */
const POLL_MS = 500;

/** Another process holds the account's lock. */
export class AccountBusyError extends Error {
  override name = "AccountBusyError";
  constructor(
    readonly account: string,
    readonly group: RunLockGroup,
  ) {
    super(`account "${account}" is being written by another process (${group}): one run per account at a time`);
  }
}

export interface RunLock {
  /** Aborted if the lock's connection is lost (the lock with it): stop writing. */
  signal: AbortSignal;
  /** Runs of the group left "running" by dead processes, marked interrupted on acquiring. */
  interruptedRuns: number;
  release(): Promise<void>;
}

export interface AcquireOptions {
  /** Wait for the holder to finish instead of failing with AccountBusyError. */
  wait?: boolean;
  /** Gives up waiting. */
  signal?: AbortSignal;
}

/** What the lock statements run on: a pg client (the command's own, or the worker's lock session). */
export interface LockConnection {
  query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>>;
}

/** pg_try_advisory_lock on the account's key for `group`: true when this session now holds it. */
export async function tryAdvisoryLock(c: LockConnection, account: string, group: RunLockGroup): Promise<boolean> {
  const { rows } = await c.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS ok", [
    GROUP_KEY[group] | 0,
    account,
  ]);
  return rows[0]!.ok;
}

/** pg_advisory_unlock of the same key (one level: advisory locks count re-entries per session). */
export async function advisoryUnlock(c: LockConnection, account: string, group: RunLockGroup): Promise<void> {
  await c.query("SELECT pg_advisory_unlock($1::int, hashtext($2))", [GROUP_KEY[group] | 0, account]);
}

/**
 * Marks the account's runs of `group` still "running" interrupted: called holding the lock, so
 * none of them can be live. Returns how many.
 */
export async function markInterruptedRuns(c: LockConnection, account: string, group: RunLockGroup): Promise<number> {
  const marked = await c.query(
    `UPDATE sync_runs SET outcome = 'interrupted', finished_at = now(), error = coalesce(error, $3)
     WHERE account_name = $1 AND outcome = 'running' AND stream LIKE ANY($2::text[])`,
    [account, GROUP_STREAMS[group], INTERRUPTED_RUN_ERROR],
  );
  return marked.rowCount ?? 0;
}

/** Takes the account's lock for `group`, or throws AccountBusyError (at once, or when `wait` gives up). */
export async function acquireRunLock(
  databaseUrl: string,
  account: string,
  group: RunLockGroup,
  o: AcquireOptions = {},
): Promise<RunLock> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: `ledger-sync run lock ${group}` });
  const lost = new AbortController();
  client.on("error", (err) => lost.abort(err));
  await client.connect();
  try {
    for (;;) {
      if (await tryAdvisoryLock(client, account, group)) break;
      if (!o.wait || o.signal?.aborted) throw new AccountBusyError(account, group);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const interruptedRuns = await markInterruptedRuns(client, account, group);
    return {
      signal: lost.signal,
      interruptedRuns,
      release: async () => {
        // Ending the session releases the lock; no unlock needed (and none can fail).
        await client.end().catch(() => undefined);
      },
    };
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
}

/** Takes several groups' locks in one fixed order (so two runs never wait on each other crosswise). */
export async function acquireRunLocks(
  databaseUrl: string,
  account: string,
  groups: RunLockGroup[],
  o: AcquireOptions = {},
): Promise<RunLock> {
  const held: RunLock[] = [];
  try {
    for (const g of GROUP_ORDER.filter((x) => groups.includes(x)))
      held.push(await acquireRunLock(databaseUrl, account, g, o));
  } catch (err) {
    await Promise.all(held.map((l) => l.release()));
    throw err;
  }
  return {
    signal: AbortSignal.any(held.map((l) => l.signal)),
    interruptedRuns: held.reduce((n, l) => n + l.interruptedRuns, 0),
    release: async () => {
      await Promise.all(held.map((l) => l.release()));
    },
  };
}
