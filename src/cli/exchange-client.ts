// The exchange client of a one-shot command: the configured account, an in-process weight gate.
import { requireCredentials, type Config } from "../config/index.ts";
import { exchangeClientFromConfig, localWeightGate } from "../exchange/client-from-config.ts";
import type { ExchangeClient } from "../exchange/http-client.ts";
import type { Logger } from "../log/logger.ts";

export function createExchangeClient(config: Config, logger: Logger): ExchangeClient {
  return exchangeClientFromConfig(config, { credentials: requireCredentials(config), gate: localWeightGate(config), logger });
}
