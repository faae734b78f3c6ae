// The console's database connection: DATABASE_URL as given (the grant-readonly role is enough), with
// session settings that make it harmless whatever role the URL names, the worker's included:
// - default_transaction_read_only: every statement runs in a read-only transaction, so even a
//   writer's credentials cannot write through the console;
// - statement_timeout: a page never holds a connection (or the server) for more than 30 s;
// - jit off: JIT compiling costs ~0.5 s per chart query and saves nothing on queries this short.
import { createDb, type Db } from "../store/prisma.ts";

const SESSION_OPTIONS = "-c default_transaction_read_only=on -c statement_timeout=30000 -c jit=off";

/** The URL with the console's session settings added to any `options` it already carries. */
export function consoleDatabaseUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const given = url.searchParams.get("options");
  url.searchParams.set("options", given ? `${given} ${SESSION_OPTIONS}` : SESSION_OPTIONS);
  return url.toString();
}

/** `poolMax`: the connections the console may use (the worker gives it a share of DATABASE_POOL_MAX). */
export function openConsoleDb(databaseUrl: string, poolMax?: number): Db {
  return createDb(consoleDatabaseUrl(databaseUrl), poolMax === undefined ? {} : { poolMax });
}
