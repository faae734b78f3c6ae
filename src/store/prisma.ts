// The Prisma client, on the pg driver adapter (no Rust engine needed at run time), over a pg pool
// we own. The bills write, the hot path, uses that pool directly (directPool): Prisma's debug module
// keeps the arguments of its last 100 calls even with debugging off, and a bills batch carries up
// to thousands of bills in its parameters, so through Prisma a backfill would keep that many
// finished batches in memory (docs/design/write-path.md); it also spends CPU serialising
// parameters that pg sends as they are.
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { PrismaClient } from "./generated/client.ts";
import { databaseTlsErrorIn, pgPoolConfig } from "./pg-config.ts";

export type Db = PrismaClient;

const pools = new WeakMap<Db, pg.Pool>();

export interface DbOptions {
  /**
   * Connections the pool may open (4 unless told). The worker passes DATABASE_POOL_MAX - 1: its
   * lock session (lock-session.ts) is the one more (docs/design/connections.md).
   */
  poolMax?: number;
  /**
   * Wraps the driver adapter, so that every statement goes through the wrapper (the console's makes
   * each one read-only: console/console-db.ts). Such a client has no directPool, which would bypass it.
   */
  adapter?: (base: PrismaPg) => SqlDriverAdapterFactory;
}

/** Every interactive transaction's limits: waiting for a pooled connection, and running. */
export const TRANSACTION_OPTIONS = { maxWait: 60_000, timeout: 120_000 } as const;

/** application_name of the pool's connections (pg_stat_activity shows it). */
export const POOL_APPLICATION_NAME = "ledger-sync pool";

export function createDb(databaseUrl: string, o: DbOptions = {}): Db {
  // Bounded, and no connectionTimeoutMillis: when every connection is busy, a query waits in the
  // pool's queue (unbounded, first come first served) for one to come free instead of failing, so
  // hundreds of running jobs share `max` connections.
  const max = o.poolMax ?? 4;
  if (!Number.isInteger(max) || max < 1)
    throw new RangeError(`poolMax must be a whole number of at least 1, not ${max}`);
  // TLS as libpq does it (pg-config.ts); an application_name in the URL still wins, as before.
  const pool = new pg.Pool({ application_name: POOL_APPLICATION_NAME, ...pgPoolConfig(databaseUrl), max });
  // Prisma ends the pool on $disconnect. Its interactive transactions wait for a connection as
  // queries do: Prisma's own defaults (2 s to start, 5 s in all) fail them whenever the pool is
  // busy with other jobs, which at fleet size is most of the time.
  const base = new PrismaPg(pool, { disposeExternalPool: true });
  const db = new PrismaClient({ adapter: o.adapter ? o.adapter(base) : base, transactionOptions: TRANSACTION_OPTIONS });
  if (!o.adapter) pools.set(db, pool);
  return db;
}

/** The pg pool under a client made by createDb (undefined for any other client). */
export function directPool(db: Db): pg.Pool | undefined {
  return pools.get(db);
}

// PostgreSQL error classes that mean the server cannot be used right now: 08 connection
// exceptions, 57P01-57P03 (admin/crash shutdown, cannot connect now: starting or stopping).
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123])$/;
const UNAVAILABLE_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout"]);
// P1001 can't reach, P1002 timed out, P1017 server closed the connection.
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ECONNABORTED",
]);
const UNAVAILABLE_PRISMA_CODES = new Set(["P1001", "P1002", "P1017"]);
// pg's messages when a connection dies under a query; one pattern of alternatives.
const CONNECTION_LOST_MESSAGE = new RegExp(
  [
    "Connection terminated unexpectedly",
    "Can't reach database server",
    "Connection terminated due to connection timeout",
    "terminating connection due to administrator command",
    "the database system is (starting up|shutting down|in recovery mode)",
    // A statement on a held client whose connection died between statements (pg-config.ts).
    "Client has encountered a connection error and is not queryable",
  ].join("|"),
);

/**
 * True when `err` (from the Prisma client on adapter-pg) means PostgreSQL is unreachable or
 * restarting, rather than that the statement itself failed: a retry later can succeed.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  // A certificate that does not verify (or a server without TLS) is a wrong URL: waiting never heals it.
  if (databaseTlsErrorIn(err)) return false;
  const e = err as Error & {
    code?: unknown;
    meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown; originalCode?: unknown } } };
  };
  if (typeof e.code === "string" && UNAVAILABLE_PRISMA_CODES.has(e.code)) return true;
  // From pg directly (the bills write uses the pool, see directPool): its DatabaseError carries the
  // SQLSTATE in `code`, and a refused or reset socket the system error code.
  if (typeof e.code === "string" && (UNAVAILABLE_SQLSTATE.test(e.code) || NETWORK_CODES.has(e.code))) return true;
  const cause = e.meta?.driverAdapterError?.cause;
  if (cause) {
    if (typeof cause.kind === "string" && UNAVAILABLE_KINDS.has(cause.kind)) return true;
    const sqlstate = cause.originalCode ?? cause.code;
    if (typeof sqlstate === "string" && UNAVAILABLE_SQLSTATE.test(sqlstate)) return true;
  }
  // pg's own errors when a connection dies under a query (passed through unwrapped).
  return CONNECTION_LOST_MESSAGE.test(e.message);
}
