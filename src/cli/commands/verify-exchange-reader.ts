// `verify`'s reader of the exchange for the wallet check: the balances now, and the bills after the
// stored cursor, read but not stored, for the accounts whose credentials this process has. Accounts without credentials
// (an auditor's read-only setting) are checked from the store alone.
import type { Config } from "../../config/index.ts";
import type { Db } from "../../store/prisma.ts";
import type { ReadNow, ReadUnstored } from "../../verify/wallet.ts";

export interface ExchangeReaders {
  readerFor(account: string): { readUnstored: ReadUnstored; readNow: ReadNow } | undefined;
  close(): Promise<void>;
}

export async function exchangeReaders(config: Config, db: Db): Promise<ExchangeReaders> {
  const [
    { commandAccounts },
    { exchangeClientFromConfig },
    { commandBudgetGates },
    { createLogger },
    { readExchangeBills },
    { v3BalanceNow },
  ] = await Promise.all([
    import("../command-accounts.ts"),
    import("../../exchange/client-from-config.ts"),
    import("../../exchange/budget-gates.ts"),
    import("../../log/logger.ts"),
    import("../../verify/exchange-read.ts"),
    import("../../verify/wallet-now.ts"),
  ]);
  let accounts: Awaited<ReturnType<typeof commandAccounts>>;
  try {
    accounts = await commandAccounts(config, db);
  } catch (err) {
    // Credentials are optional here: an auditor (no keys, or the grant-readonly role, which cannot
    // read sealed credentials) verifies from the store alone, and is told so.
    const message = err instanceof Error ? err.message : String(err);
    const reason = /permission denied/i.test(message)
      ? "this database role may not read the accounts' sealed credentials"
      : message.split("\n").filter(Boolean).at(-1);
    process.stderr.write(
      `verify: the exchange is not read (${reason}): ` +
        "the wallet check compares only the reported balances the stored bills cover\n",
    );
    accounts = [];
  }
  if (accounts.length === 0) return { readerFor: () => undefined, close: async () => {} };
  const logger = createLogger(config.logLevel, { format: config.logFormat });
  const gates = await commandBudgetGates(config, logger);
  const clients: { close(): Promise<void> }[] = [];
  const readers = new Map<string, ReturnType<ExchangeReaders["readerFor"]>>();
  const readerOf = (name: string): ReturnType<ExchangeReaders["readerFor"]> => {
    const account = accounts.find((a) => a.name === name);
    if (!account) return undefined;
    const client = exchangeClientFromConfig(config, {
      credentials: account.credentials,
      gate: gates.forAccount(name),
      logger,
    });
    clients.push(client);
    return {
      readNow: () => v3BalanceNow(db, client, name),
      readUnstored: async (fromMs, toMs) => {
        const read = await readExchangeBills({
          db,
          client,
          logger,
          account: name,
          source: account.billsSource,
          fromMs,
          toMs,
          exchangeLimits: config.exchange.limits,
        });
        return [...read.bills.values()];
      },
    };
  };
  return {
    readerFor(name) {
      if (!readers.has(name)) readers.set(name, readerOf(name));
      return readers.get(name);
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await gates.close();
    },
  };
}
