// The exchange client of a one-shot command: one account's credentials, its weight budget shared
// with the worker in Redis when REDIS_URL is set (budget-gates.ts), else kept in this process.
import type { AccountConfig } from "../config/accounts.ts";
import type { Config } from "../config/index.ts";
import { commandBudgetGates } from "../exchange/budget-gates.ts";
import { exchangeClientFromConfig } from "../exchange/client-from-config.ts";
import type { ExchangeClient } from "../exchange/http-client.ts";
import type { Logger } from "../log/logger.ts";

export async function createExchangeClient(
  config: Config,
  logger: Logger,
  account: Pick<AccountConfig, "name" | "credentials">,
): Promise<ExchangeClient> {
  const gates = await commandBudgetGates(config, logger);
  return exchangeClientFromConfig(config, {
    credentials: account.credentials,
    gate: gates.forAccount(account.name),
    logger,
    onClose: gates.close,
  });
}
