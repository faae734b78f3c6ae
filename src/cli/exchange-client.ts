// The exchange client of a one-shot command: the configured account, its weight budget shared with
// the worker in Redis when REDIS_URL is set (budget-gates.ts), else kept in this process.
import { requireCredentials, type Config } from "../config/index.ts";
import { commandBudgetGates } from "../exchange/budget-gates.ts";
import { exchangeClientFromConfig } from "../exchange/client-from-config.ts";
import type { ExchangeClient } from "../exchange/http-client.ts";
import type { Logger } from "../log/logger.ts";

export async function createExchangeClient(config: Config, logger: Logger): Promise<ExchangeClient> {
  const credentials = requireCredentials(config);
  const gates = await commandBudgetGates(config, logger);
  return exchangeClientFromConfig(config, {
    credentials,
    gate: gates.forAccount(config.accountName),
    logger,
    onClose: gates.close,
  });
}
