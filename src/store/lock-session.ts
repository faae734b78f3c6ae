// The worker's run locks (run-lock.ts) on one PostgreSQL session for the whole process: every
// account lock its running jobs hold is a session advisory lock on that one connection, instead
// of one connection per running job (hundreds of jobs would exhaust max_connections). The keys are
// the ones acquireRunLock takes, so a worker job and `sync --once` in another process still
// exclude each other exactly.
//
// Rules, and why:
// - In-process exclusion is the map: advisory locks are re-entrant within one session, so
//   PostgreSQL would grant this session a lock it already holds; the map refuses a second holder
//   before asking. An entry exists from before the lock is asked for until after it is unlocked,
//   so the map never says "free" while the session may still hold the lock.
// - Queries on the one connection run one at a time, in the order asked: each waits for the one
//   before it (a chain of our own; pg 8 would queue them too, but deprecates relying on that, and
//   pg 9 drops it). An unlock is therefore always sent before a later take of the same lock.
// - A statement may take at most STATEMENT_TIMEOUT_MS: one stuck statement (the interrupted-runs
//   UPDATE waiting on a row lock, say) would hold up every job's taking and releasing.
// - Release is pg_advisory_unlock on the session. An unlock that fails on a connection still up
//   leaves the lock in doubt: the connection is dropped then, which releases all its locks for sure.
// - Losing the connection loses every lock on it (PostgreSQL releases them when the session ends,
//   and another process may take them at once): every holder's signal aborts so it stops writing,
//   the map is cleared, onLost is told, and the next tryAcquire connects again.
import pg from "pg";
import {
  advisoryUnlock,
  markInterruptedRuns,
  tryAdvisoryLock,
  type LockConnection,
  type RunLock,
  type RunLockGroup,
} from "./run-lock.ts";

export interface LockSession {
  /** The lock, or undefined when another process (or another job of this process) holds it. */
  tryAcquire(account: string, group: RunLockGroup): Promise<RunLock | undefined>;
  /** Held locks right now (for metrics/tests). */
  held(): number;
  close(): Promise<void>;
}

export interface LockSessionOptions {
  /** application_name of the session's connection (pg_stat_activity shows it). */
  applicationName?: string;
  /** The connection was lost, and every lock on it (their holders' signals are aborted). */
  onLost?: (err: Error) => void;
}

export const LOCK_SESSION_APPLICATION_NAME = "ledger-sync run locks";
const STATEMENT_TIMEOUT_MS = 30_000;

interface Connection {
  client: pg.Client;
  /** The client's queries, one after another (see the rules above). */
  serial: LockConnection;
  /** Errored, ended or closed: nothing more is sent on it, and no lock on it is held. */
  gone: boolean;
}

interface Entry {
  /** The connection the lock is asked for or held on (undefined while connecting). */
  conn: Connection | undefined;
  /** pg_try_advisory_lock said yes: the session holds it until unlocked or the connection is gone. */
  held: boolean;
  lost: AbortController;
}

export function createLockSession(databaseUrl: string, o: LockSessionOptions = {}): LockSession {
  const entries = new Map<string, Entry>();
  let live: Connection | undefined;
  let connecting: Promise<Connection> | undefined;
  let closed = false;

  /** Drops `conn` and every lock on it; `err` is what the holders' signals and onLost get. */
  const lose = (conn: Connection, err: Error, notify: boolean) => {
    if (conn.gone) return;
    conn.gone = true;
    if (live === conn) live = undefined;
    for (const [key, e] of entries) {
      if (e.conn !== conn) continue;
      entries.delete(key);
      e.lost.abort(err);
    }
    void conn.client.end().catch(() => undefined);
    if (notify) o.onLost?.(err);
  };

  const connection = (): Promise<Connection> => {
    if (live) return Promise.resolve(live);
    connecting ??= (async () => {
      const client = new pg.Client({
        connectionString: databaseUrl,
        application_name: o.applicationName ?? LOCK_SESSION_APPLICATION_NAME,
        // A dead peer is found by TCP keepalives too, not only by the next query on the session
        // (locks can sit idle on it for a whole run).
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
        statement_timeout: STATEMENT_TIMEOUT_MS,
      });
      const conn: Connection = { client, serial: serialize(client), gone: false };
      const lostWith = (cause: unknown) =>
        new Error("lost the run-lock connection to PostgreSQL, and the account locks held on it", { cause });
      client.on("error", (err) => lose(conn, lostWith(err), true));
      client.on("end", () => lose(conn, lostWith(new Error("connection ended")), true));
      try {
        await client.connect();
      } catch (err) {
        conn.gone = true;
        await client.end().catch(() => undefined);
        throw err;
      }
      if (closed) {
        lose(conn, new Error("the lock session is closed"), false);
        throw new Error("the lock session is closed");
      }
      live = conn;
      return conn;
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  /** Unlocks (when held) and forgets `entry`; a no-op once it is released or lost. */
  const letGo = async (key: string, entry: Entry, account: string, group: RunLockGroup) => {
    if (entries.get(key) !== entry) return;
    const conn = entry.conn;
    try {
      if (entry.held && conn && !conn.gone) await advisoryUnlock(conn.serial, account, group);
    } catch (err) {
      // On a dead connection the lock went with it (lose() has run or will). On a live one it is
      // in doubt: dropping the connection is the one sure release (its other holders are told).
      if (conn && !conn.gone) lose(conn, new Error("could not unlock an account run lock", { cause: err }), true);
    } finally {
      if (entries.get(key) === entry) entries.delete(key);
    }
  };

  return {
    async tryAcquire(account, group) {
      if (closed) throw new Error("the lock session is closed");
      // Group names hold no ":", so the key is unique per (group, account).
      const key = `${group}:${account}`;
      if (entries.has(key)) return undefined;
      const entry: Entry = { conn: undefined, held: false, lost: new AbortController() };
      entries.set(key, entry);
      try {
        const conn = await connection();
        // Lost while this taker was waiting for the connection: it was never asked on it.
        if (conn.gone) throw new Error("lost the run-lock connection to PostgreSQL");
        entry.conn = conn;
        if (!(await tryAdvisoryLock(conn.serial, account, group))) {
          await letGo(key, entry, account, group);
          return undefined;
        }
        entry.held = true;
        const interruptedRuns = await markInterruptedRuns(conn.serial, account, group);
        // The connection died after the lock was granted: it is gone, and another process may hold it.
        if (entry.lost.signal.aborted) throw entry.lost.signal.reason;
        return {
          signal: entry.lost.signal,
          interruptedRuns,
          release: () => letGo(key, entry, account, group),
        };
      } catch (err) {
        await letGo(key, entry, account, group);
        throw err;
      }
    },

    held: () => [...entries.values()].filter((e) => e.held).length,

    async close() {
      closed = true;
      await connecting?.catch(() => undefined);
      // Ending the session releases whatever it still holds; holders still running are told.
      const closedError = new Error("the lock session is closed");
      for (const [key, e] of entries) {
        entries.delete(key);
        e.lost.abort(closedError);
      }
      const conn = live;
      if (!conn) return;
      conn.gone = true;
      live = undefined;
      await conn.client.end().catch(() => undefined);
    },
  };
}

/** `client`'s queries, each sent once the one before it has finished (failed or not). */
function serialize(client: pg.Client): LockConnection {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    query<R extends pg.QueryResultRow>(text: string, values: unknown[]) {
      const result = tail.then(() => client.query<R>(text, values));
      tail = result.catch(() => undefined);
      return result;
    },
  };
}
