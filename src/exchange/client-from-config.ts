// The one mapping from configuration to an exchange client; callers add what differs: whose
// credentials, which weight gate (in-process or shared in Redis), and any response hook.
import { ipWeightSpent, type Config, type ExchangeCredentials } from "../config/index.ts";
import type { Logger } from "../log/logger.ts";
import { ExchangeClient, type ExchangeClientOptions } from "./http-client.ts";
import { SlidingWindowGate, type WeightGate } from "./weight-gate.ts";

export interface ClientParts {
  credentials: ExchangeCredentials;
  gate: WeightGate;
  logger: Logger;
  onResponse?: ExchangeClientOptions["onResponse"];
  onClose?: ExchangeClientOptions["onClose"];
  dispatcher?: ExchangeClientOptions["dispatcher"];
}

export function exchangeClientFromConfig(config: Config, p: ClientParts): ExchangeClient {
  return new ExchangeClient({
    baseUrl: config.exchange.baseUrl,
    locale: config.exchange.locale,
    timeoutMs: config.exchange.timeoutMs,
    maxAttempts: config.exchange.maxAttempts,
    maxWaitMs: config.exchange.maxWaitMs,
    // Every exchange connection of the process leaves from EGRESS_LOCAL_ADDRESS when it is set.
    ...(config.worker.egressLocalAddress === undefined ? {} : { localAddress: config.worker.egressLocalAddress }),
    ...p,
  });
}

/** The configured budgets (the IP's less its headroom), enforced in this process only (commands run without Redis). */
export function localWeightGate(config: Config): SlidingWindowGate {
  return new SlidingWindowGate({
    ip: ipWeightSpent(config.rateLimit),
    uid: config.rateLimit.uidWeight,
    windowMs: config.rateLimit.windowMs,
  });
}
