// The database, account and exchange client a syncing command works with, opened once and always
// closed. The account is the plain variables' one, or with --account NAME any configured or
// registered account (the accounts table, ACCOUNTS_FILE).
import type { AccountConfig } from "../config/accounts.ts";
import { requireCredentials, requireDatabaseUrl, type Config } from "../config/index.ts";
import type { ExchangeClient } from "../exchange/http-client.ts";
import type { Db } from "../store/prisma.ts";
import { createRuntime, type Runtime } from "./runtime.ts";

export interface SyncContext extends Runtime {
  db: Db;
  client: ExchangeClient;
  account: AccountConfig;
}

/** The account of the plain variables (ACCOUNT_NAME, SYNC_COIN_IDS, EXCHANGE_API_*). */
function plainAccount(config: Config): AccountConfig {
  return {
    name: config.accountName,
    coinIds: config.coinIds,
    backfillFromMs: config.backfillFromMs,
    credentials: requireCredentials(config),
    billsSource: config.billsSource,
    origin: "env",
  };
}

export async function withSyncContext<T>(
  run: (ctx: SyncContext) => Promise<T>,
  o: { account?: string } = {},
): Promise<T> {
  const runtime = createRuntime();
  const databaseUrl = requireDatabaseUrl(runtime.config);
  // Checked before anything opens: a missing variable is the one-line refusal.
  const plain = o.account === undefined ? plainAccount(runtime.config) : undefined;
  // Loaded here, not at startup: `--help` and config errors should not pay for Prisma.
  const [{ createDb }, { createExchangeClient }] = await Promise.all([
    import("../store/prisma.ts"),
    import("./exchange-client.ts"),
  ]);
  const db = createDb(databaseUrl);
  let client: ExchangeClient | undefined;
  try {
    let account = plain;
    if (account === undefined) {
      const { loadAccountDirectory, pickAccount } = await import("../store/accounts/directory.ts");
      account = pickAccount(await loadAccountDirectory(runtime.config, db), o.account!);
    }
    client = await createExchangeClient(runtime.config, runtime.logger, account);
    return await run({ ...runtime, db, client, account });
  } finally {
    await Promise.allSettled([client?.close(), db.$disconnect()]);
  }
}
