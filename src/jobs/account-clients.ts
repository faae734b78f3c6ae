// One exchange client per account, each with its own UID budget and the egress's shared IP budget,
// both held in Redis so that every worker process on every machine counts against the same ones.
import type { Redis } from "ioredis";
import type { AccountConfig } from "../config/accounts.ts";
import type { Config } from "../config/index.ts";
import { exchangeClientFromConfig } from "../exchange/client-from-config.ts";
import { redisBudgetGates } from "../exchange/budget-gates.ts";
import type { Logger } from "../log/logger.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { AccountRuntime } from "./context.ts";

export interface AccountClients {
  runtimes: Map<string, AccountRuntime>;
  close(): Promise<void>;
}

export function createAccountClients(
  config: Config,
  accounts: AccountConfig[],
  redis: Redis,
  logger: Logger,
  metrics: Metrics,
): AccountClients {
  const gates = redisBudgetGates(config, redis, logger);
  const runtimes = new Map<string, AccountRuntime>();
  for (const account of accounts) {
    const gate = gates.forAccount(account.name);
    const client = exchangeClientFromConfig(config, {
      credentials: account.credentials,
      gate,
      logger: logger.child({ account: account.name }),
      onResponse: ({ endpoint, status, durationMs }) => {
        metrics.apiRequest(endpoint, status, durationMs / 1000);
        metrics.pagesFetched(account.name, endpoint);
        if (status === 429) metrics.rateLimited(account.name);
        const used = gate.used();
        const allowance = gate.allowance();
        metrics.weight("uid", account.name, used.uid, config.rateLimit.uidWeight, allowance.uid);
        metrics.weight("ip", config.worker.egressId, used.ip, config.rateLimit.ipWeight, allowance.ip);
      },
    });
    runtimes.set(account.name, { account, client });
  }
  return {
    runtimes,
    close: async () => {
      await Promise.allSettled([...runtimes.values()].map((r) => r.client.close()));
      await gates.close();
    },
  };
}
