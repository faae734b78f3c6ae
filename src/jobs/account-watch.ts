// The worker follows the accounts table while it runs: every ACCOUNTS_REFRESH_MS it reads the
// directory again and brings its runtimes to it (account-clients.ts update()). A read that fails
// (PostgreSQL away, a master key that no longer opens the rows) keeps the accounts it has.
import type { Config } from "../config/index.ts";
import type { Logger } from "../log/logger.ts";
import type { Metrics } from "../ops/metrics.ts";
import { loadAccountDirectory } from "../store/accounts/directory.ts";
import type { Db } from "../store/prisma.ts";
import type { AccountClients } from "./account-clients.ts";
import { repeatEvery, type Repeating } from "./repeat.ts";

export function watchAccounts(o: {
  config: Config;
  db: Db;
  clients: AccountClients;
  logger: Logger;
  everyMs: number;
  /** An account that left (removed or disabled) leaves /metrics too. */
  metrics?: Pick<Metrics, "forgetAccount">;
  /** Told of a failed read (e.g. an outage log); by default it is a warning. */
  onError?: (err: unknown) => void;
}): Repeating {
  const logger = o.logger.child({ stream: "accounts" });
  let unreadableSeen = "";
  const refresh = async () => {
    try {
      const held = new Map([...o.clients.runtimes].map(([name, rt]) => [name, rt.account]));
      const directory = await loadAccountDirectory(o.config, o.db, process.env, held);
      const changes = o.clients.update(directory.accounts);
      for (const name of changes.removed) o.metrics?.forgetAccount(name);
      if (changes.added.length + changes.removed.length + changes.changed.length > 0)
        logger.info({ ...changes, accounts: o.clients.runtimes.size }, "accounts changed");
      const unreadable = directory.unreadable.map((u) => u.error.message).join("\n");
      if (unreadable !== unreadableSeen && unreadable !== "")
        for (const u of directory.unreadable)
          logger.error(
            { account: u.account, err: u.error.message },
            "account not synced: its credentials cannot be opened",
          );
      unreadableSeen = unreadable;
    } catch (err) {
      if (o.onError) o.onError(err);
      else logger.warn({ err: (err as Error).message }, "could not re-read the accounts; keeping the current ones");
    }
  };
  return repeatEvery(o.everyMs, refresh);
}
