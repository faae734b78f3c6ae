// One migration command's lifetime: connect, open an engine, run, and always clean up (free the
// engine, drop shadow databases, end pools) so the process can exit right after.
import { createMigrationAdapter, type MigrationAdapter } from "./adapter.ts";
import { describeTarget, passwordOf, reasonOf, redactError } from "../../src/store/migrate/errors.ts";
import { engineError, openSchemaEngine, type SchemaEngine } from "./wasm-engine.ts";

export interface Session {
  engine: SchemaEngine;
  adapter: MigrationAdapter;
}

export async function withMigrationEngine<T>(
  databaseUrl: string,
  datamodels: [string, string][] | undefined,
  run: (session: Session) => Promise<T>,
): Promise<T> {
  let password: string | undefined;
  let adapter: MigrationAdapter | undefined;
  try {
    adapter = createMigrationAdapter(databaseUrl);
    password = typeof adapter.config.password === "string" ? adapter.config.password : undefined;
    // Checked up front: the engine's own message for this case does not name the database.
    try {
      await adapter.pool.query("SELECT 1");
    } catch (error) {
      throw new Error(`cannot connect to DATABASE_URL ${describeTarget(adapter.config)}: ${reasonOf(error)}`, {
        cause: error,
      });
    }
    const handle = await openSchemaEngine(adapter.factory, datamodels);
    try {
      const session = adapter;
      return await handle
        .run((engine) => run({ engine, adapter: session }))
        .catch((error: unknown) => {
          throw engineError(error);
        });
    } finally {
      handle.free();
    }
  } catch (error) {
    password ??= passwordOf(databaseUrl);
    throw redactError(error, password);
  } finally {
    await adapter?.close().catch(() => {});
  }
}
