// Builds the exchange client from configuration (shared by the commands that call the exchange).
import { requireCredentials, type Config } from "../config/index.ts";
import { ExchangeClient } from "../exchange/http-client.ts";
import { SlidingWindowGate } from "../exchange/weight-gate.ts";
import type { Logger } from "../log/logger.ts";

export function createExchangeClient(config: Config, logger: Logger): ExchangeClient {
  return new ExchangeClient({
    baseUrl: config.exchange.baseUrl,
    credentials: requireCredentials(config),
    locale: config.exchange.locale,
    timeoutMs: config.exchange.timeoutMs,
    maxAttempts: config.exchange.maxAttempts,
    gate: new SlidingWindowGate({ ip: config.rateLimit.ipWeight, uid: config.rateLimit.uidWeight, windowMs: config.rateLimit.windowMs }),
    logger,
  });
}
