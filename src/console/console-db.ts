// The console's database connection: DATABASE_URL as given (the grant-readonly role is enough), made
// harmless whatever role the URL names, the worker's and the owner's included. Every statement runs
// in a transaction that is made read-only and given its limits before anything else runs in it:
// - transaction_read_only: even a writer's credentials cannot write through the console;
// - statement_timeout: a page never holds a connection (or the server) for more than 30 s;
// - jit off: JIT compiling costs ~0.5 s per chart query and saves nothing on queries this short.
// All three are per transaction (SET LOCAL), never session settings or the `options` startup
// parameter: a pooler in transaction mode refuses that parameter, and a session SET would stay on a
// server connection the pooler then lends to other clients.
//
// It is done in the driver adapter under the Prisma client, so no console read can bypass it: a
// query on its own is wrapped in BEGIN ... COMMIT, and an interactive or batch transaction gets the
// settings right after its BEGIN.
import type { PrismaPg } from "@prisma/adapter-pg";
import type {
  IsolationLevel,
  SqlDriverAdapter,
  SqlDriverAdapterFactory,
  SqlQuery,
  Transaction,
} from "@prisma/driver-adapter-utils";
import { createDb, type Db } from "../store/prisma.ts";

/** The console's limit on one statement. */
export const CONSOLE_STATEMENT_TIMEOUT_MS = 30_000;

// One statement (one round trip); set_config(..., true) is SET LOCAL.
const SETTINGS = `SELECT set_config('transaction_read_only', 'on', true),
       set_config('statement_timeout', '${CONSOLE_STATEMENT_TIMEOUT_MS}', true),
       set_config('jit', 'off', true)`;

const sql = (text: string): SqlQuery => ({ sql: text, args: [], argTypes: [] });

async function readOnlyTransaction(adapter: SqlDriverAdapter, isolationLevel?: IsolationLevel): Promise<Transaction> {
  const tx = await adapter.startTransaction(isolationLevel);
  try {
    await tx.executeRaw(sql(SETTINGS));
  } catch (err) {
    await end(tx, "ROLLBACK").catch(() => undefined);
    throw err;
  }
  return tx;
}

/** Ends a transaction the console began itself (the adapter's commit() only releases the connection
 *  unless it sends the statement itself, usePhantomQuery). */
async function end(tx: Transaction, how: "COMMIT" | "ROLLBACK"): Promise<void> {
  try {
    if (!tx.options.usePhantomQuery) await tx.executeRaw(sql(how));
  } finally {
    await (how === "COMMIT" ? tx.commit() : tx.rollback());
  }
}

/** One statement in a read-only transaction of its own. */
async function alone<T>(adapter: SqlDriverAdapter, run: (tx: Transaction) => Promise<T>): Promise<T> {
  const tx = await readOnlyTransaction(adapter);
  let result: T;
  try {
    result = await run(tx);
  } catch (err) {
    await end(tx, "ROLLBACK").catch(() => undefined);
    throw err;
  }
  await end(tx, "COMMIT");
  return result;
}

function readOnlyAdapter(adapter: SqlDriverAdapter): SqlDriverAdapter {
  return {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    queryRaw: (query) => alone(adapter, (tx) => tx.queryRaw(query)),
    executeRaw: (query) => alone(adapter, (tx) => tx.executeRaw(query)),
    executeScript: () => Promise.reject(new Error("the console runs no scripts")),
    startTransaction: (isolationLevel) => readOnlyTransaction(adapter, isolationLevel),
    ...(adapter.getConnectionInfo ? { getConnectionInfo: () => adapter.getConnectionInfo!() } : {}),
    dispose: () => adapter.dispose(),
  };
}

function readOnlyFactory(base: PrismaPg): SqlDriverAdapterFactory {
  return {
    provider: base.provider,
    adapterName: base.adapterName,
    connect: async () => readOnlyAdapter(await base.connect()),
  };
}

/** `poolMax`: the connections the console may use (the worker gives it a share of DATABASE_POOL_MAX). */
export function openConsoleDb(databaseUrl: string, poolMax?: number): Db {
  return createDb(databaseUrl, { adapter: readOnlyFactory, ...(poolMax === undefined ? {} : { poolMax }) });
}
