// The driver adapter the schema engine talks to the database through: adapter-pg, with the fixes
// that running migrations through it needs (each explained where it is made).
import { randomUUID } from "node:crypto";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  bindMigrationAwareSqlAdapterFactory,
  ColumnTypeEnum,
  type SqlQuery,
  type SqlResultSet,
  type ErrorCapturingSqlMigrationAwareDriverAdapterFactory,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type Transaction,
} from "@prisma/driver-adapter-utils";

/** Postgres's internal one-byte `"char"` type (pg_constraint.contype and the like). */
const CHAR_OID = 18;
const TEXT_OID = 25;
/** Marks, on a pg result's rows array, which columns were "char". */
const CHAR_COLUMNS = Symbol("charColumns");

type Rows = unknown[][] & { [CHAR_COLUMNS]?: number[] };

interface PgResultLike {
  fields: { dataTypeID: number }[];
  rows: Rows;
}

// The parts of adapter-pg's classes we reach into; they are private/protected in its typings.
interface PgInternals {
  performIO(query: SqlQuery): Promise<PgResultLike>;
  queryRaw(query: SqlQuery): Promise<SqlResultSet>;
  onError(error: unknown): never;
}

// The engine reads "char" columns (e.g. pg_constraint.contype, as soon as a CHECK constraint
// exists) as a Character, but adapter-pg knows no mapping for OID 18 and throws "Unsupported column
// type". We let adapter-pg read such a column as text (same string value), then report it as
// Character; mapping it to Text only moves the failure into an engine panic. The rows array is the
// one object that travels from performIO to queryRaw's result, so it carries the column indexes
// (no shared state between concurrent queries). Patched per instance, so the application's own
// Prisma Client (same adapter-pg module) is left untouched.
function readCharColumns(queryable: object): void {
  const self = queryable as PgInternals;
  const performIO = self.performIO;
  self.performIO = async function (this: PgInternals, query: SqlQuery) {
    const result = await performIO.call(this, query);
    const charColumns: number[] = [];
    result.fields.forEach((field, index) => {
      if (field.dataTypeID === CHAR_OID) {
        field.dataTypeID = TEXT_OID;
        charColumns.push(index);
      }
    });
    if (charColumns.length > 0) result.rows[CHAR_COLUMNS] = charColumns;
    return result;
  };
  const queryRaw = self.queryRaw;
  self.queryRaw = async function (this: PgInternals, query: SqlQuery) {
    const resultSet = await queryRaw.call(this, query);
    for (const index of (resultSet.rows as Rows)[CHAR_COLUMNS] ?? []) {
      resultSet.columnTypes[index] = ColumnTypeEnum.Character;
    }
    return resultSet;
  };
}

/** The database's own error for the last script that failed (kept before adapter-pg maps it). */
export interface ScriptFailure {
  script: string;
  error: unknown;
}

function patchAdapter(
  adapter: SqlDriverAdapter,
  pool: pg.Pool,
  onScriptFailure: (failure: ScriptFailure) => void,
): SqlDriverAdapter {
  readCharColumns(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (isolationLevel): Promise<Transaction> => {
    const tx = await startTransaction(isolationLevel);
    readCharColumns(tx);
    return tx;
  };
  // adapter-pg splits scripts on ";" and runs the pieces one by one: that breaks any statement
  // with a ";" inside (function bodies, string literals) and a failure leaves the earlier pieces
  // applied. One simple-protocol query runs the whole script as one implicit transaction, which
  // is what the native engine does.
  adapter.executeScript = async (script: string): Promise<void> => {
    try {
      await pool.query(script);
    } catch (error) {
      onScriptFailure({ script, error });
      (adapter as unknown as PgInternals).onError(error);
    }
  };
  return adapter;
}

const clientsOf = new WeakMap<pg.Pool, Set<pg.PoolClient>>();

function trackClients(pool: pg.Pool): pg.Pool {
  const clients = new Set<pg.PoolClient>();
  clientsOf.set(pool, clients);
  pool.on("connect", (client) => clients.add(client));
  pool.on("remove", (client) => clients.delete(client));
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on("error", () => {});
  return pool;
}

/**
 * pool.end() waits for checked-out clients to come back; after an engine panic in the middle of a
 * transaction one never will. Give them a moment, then close their connections.
 */
async function endPool(pool: pg.Pool, graceMs = 2000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = pool.end();
  const grace = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), graceMs);
  });
  try {
    if ((await Promise.race([ended, grace])) === "timeout") {
      // Still in the set means still checked out (idle ones were removed by end()); releasing
      // with an error makes the pool destroy the connection and forget the client.
      for (const client of clientsOf.get(pool) ?? []) {
        try {
          client.release(new Error("abandoned by the schema engine"));
        } catch {
          // already released meanwhile
        }
      }
      await ended;
    }
  } finally {
    clearTimeout(timer);
  }
}

export interface MigrationAdapter {
  /** The factory to hand to the schema engine (already error-capturing-bound). */
  factory: ErrorCapturingSqlMigrationAwareDriverAdapterFactory;
  /** Pool on the target database, for our own queries. */
  pool: pg.Pool;
  config: pg.PoolConfig;
  /** Set when a script (e.g. a migration.sql) failed on the database. */
  readonly lastScriptFailure: ScriptFailure | undefined;
  /** Drops any shadow database still around and ends every pool. */
  close(): Promise<void>;
}

export function createMigrationAdapter(databaseUrl: string): MigrationAdapter {
  // A parsed config rather than {connectionString}: pg lets a connection string override
  // `database`, which would point the shadow pool at the main database.
  const config = parseIntoClientConfig(databaseUrl) as pg.PoolConfig;
  const pool = trackClients(new pg.Pool({ ...config, max: 4 }));
  const shadowDatabases = new Set<string>();
  const shadowPools = new Set<pg.Pool>();
  let lastScriptFailure: ScriptFailure | undefined;
  const recordFailure = (failure: ScriptFailure) => {
    lastScriptFailure = failure;
  };

  async function dropShadowDatabase(name: string): Promise<void> {
    shadowDatabases.delete(name);
    await pool.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  }

  const factory: SqlMigrationAwareDriverAdapterFactory = {
    provider: "postgres",
    adapterName: "@prisma/adapter-pg",
    async connect() {
      // An external pool: adapter-pg's dispose then leaves it open, and close() ends it once.
      const adapter = await new PrismaPg(pool).connect();
      return patchAdapter(adapter, pool, recordFailure);
    },
    // adapter-pg's own version drops the shadow database while its pool is still connected to it
    // (so the DROP fails); we create it, and drop it WITH (FORCE) after its pool has ended.
    async connectToShadowDb() {
      const name = `prisma_migrate_shadow_db_${randomUUID()}`;
      await pool.query(`CREATE DATABASE "${name}"`);
      shadowDatabases.add(name);
      const shadowPool = trackClients(new pg.Pool({ ...config, database: name, max: 2 }));
      shadowPools.add(shadowPool);
      const adapter = patchAdapter(await new PrismaPg(shadowPool).connect(), shadowPool, recordFailure);
      const dispose = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        await dispose();
        shadowPools.delete(shadowPool);
        await endPool(shadowPool);
        await dropShadowDatabase(name);
      };
      return adapter;
    },
  };

  return {
    // Without this binding the engine cannot read errors back ("reading 'valueOf'").
    factory: bindMigrationAwareSqlAdapterFactory(factory),
    pool,
    config,
    get lastScriptFailure() {
      return lastScriptFailure;
    },
    async close() {
      for (const shadowPool of shadowPools) await endPool(shadowPool).catch(() => {});
      shadowPools.clear();
      for (const name of [...shadowDatabases]) await dropShadowDatabase(name).catch(() => {});
      await endPool(pool);
    },
  };
}
