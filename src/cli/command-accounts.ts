// The accounts a one-shot command may call the exchange for: the plain variables' or
// ACCOUNTS_FILE's, and the registered ones of the accounts table (store/accounts/directory.ts).
import type { AccountConfig } from "../config/accounts.ts";
import type { Config } from "../config/index.ts";
import { loadAccountDirectory } from "../store/accounts/directory.ts";
import type { Db } from "../store/prisma.ts";

export async function commandAccounts(config: Config, db?: Db): Promise<AccountConfig[]> {
  if (db) return (await loadAccountDirectory(config, db)).accounts;
  const { createDb } = await import("../store/prisma.ts");
  const { requireDatabaseUrl } = await import("../config/index.ts");
  const own = createDb(requireDatabaseUrl(config), { poolMax: 1 });
  try {
    return (await loadAccountDirectory(config, own)).accounts;
  } finally {
    await own.$disconnect();
  }
}
