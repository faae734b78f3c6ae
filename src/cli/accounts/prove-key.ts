// `accounts add`, `rotate` and `import` ask the exchange once per key, with the key itself: a key
// the exchange refuses is never stored, and the answer names the exchange account (its UID), so
// one exchange account cannot be registered twice under two names.
import type { Config, ExchangeCredentials } from "../../config/index.ts";
import { fetchAccount } from "../../exchange/account-endpoint.ts";
import { fetchPublicAccount } from "../../exchange/account-public.ts";
import type { BudgetGates } from "../../exchange/budget-gates.ts";
import { exchangeClientFromConfig } from "../../exchange/client-from-config.ts";
import { ExchangeApiError } from "../../exchange/errors.ts";
import type { Logger } from "../../log/logger.ts";
import { AccountForms } from "../../streams/snapshots/account-forms.ts";

/** The exchange refused the key, or its answer names no account: nothing was stored. */
export class KeyRefusedError extends Error {
  override name = "KeyRefusedError";
}

/** The coin asked of the account endpoint: the account's first coin, else SYNC_COIN_IDS's. */
export function proofCoin(coinIds: string[], config: Config, given?: string): string {
  const coin = given ?? coinIds[0] ?? config.coinIds[0];
  if (coin === undefined)
    throw new KeyRefusedError(
      "reading the account's UID needs a coin id for the account endpoint: " +
        "give --coins (or --uid-coin, or set SYNC_COIN_IDS)",
    );
  return coin;
}

/** The key's UID (`account.user_id`), read with the key itself. */
export async function proveKey(
  config: Config,
  logger: Logger,
  gates: BudgetGates,
  account: string,
  credentials: ExchangeCredentials,
  coinId: string,
  signal?: AbortSignal,
): Promise<string> {
  const client = exchangeClientFromConfig(config, {
    credentials,
    gate: gates.forAccount(account),
    logger: logger.child({ account }),
  });
  try {
    // Either form of the account read, as snapshots ask it (the public one names the coin).
    const forms = new AccountForms({
      known: null,
      fetch: {
        seed: (coin) => fetchAccount(client, coin, signal),
        public: (coin) => {
          const name = config.coinNames[coin];
          if (name === undefined)
            throw new KeyRefusedError(
              `account "${account}": the exchange serves the account read only by coin name: ` +
                `set COIN_NAMES (e.g. ${coin}=USDT)`,
            );
          return fetchPublicAccount(client, name, config.coinNames, signal);
        },
      },
      record: async () => {},
      logger,
    });
    const r = await forms.fetch(coinId);
    if (!r.ok)
      throw new KeyRefusedError(`account "${account}": the exchange's account answer is unusable: ${r.reason}`);
    if (!r.response.account)
      throw new KeyRefusedError(
        `account "${account}": the exchange's account answer (${r.form} form) carries no account record, ` +
          "so no UID to register it by",
      );
    return r.response.account.user_id;
  } catch (err) {
    if (err instanceof ExchangeApiError)
      throw new KeyRefusedError(`account "${account}": the key does not work, nothing stored: ${err.message}`);
    throw err;
  } finally {
    await client.close();
  }
}
