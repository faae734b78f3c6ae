// The database and exchange client a syncing command works with, opened once and always closed.
import { requireDatabaseUrl } from "../config/index.ts";
import type { ExchangeClient } from "../exchange/http-client.ts";
import type { Db } from "../store/prisma.ts";
import { createRuntime, type Runtime } from "./runtime.ts";

export interface SyncContext extends Runtime {
  db: Db;
  client: ExchangeClient;
}

export async function withSyncContext<T>(run: (ctx: SyncContext) => Promise<T>): Promise<T> {
  const runtime = createRuntime();
  const databaseUrl = requireDatabaseUrl(runtime.config);
  // Loaded here, not at startup: `--help` and config errors should not pay for Prisma.
  const [{ createDb }, { createExchangeClient }] = await Promise.all([
    import("../store/prisma.ts"),
    import("./exchange-client.ts"),
  ]);
  const client = await createExchangeClient(runtime.config, runtime.logger);
  const db = createDb(databaseUrl);
  try {
    return await run({ ...runtime, db, client });
  } finally {
    await Promise.allSettled([client.close(), db.$disconnect()]);
  }
}
