// The weight gates of a process. With Redis (the worker's connection, or REDIS_URL in a command)
// every process of the deployment draws from the same budgets, the IP budget per egress and the UID
// budget per account, and learns the same allowance from 429s: a command run while the worker
// works, or started after one was killed, sees what they spent. Without Redis the budgets are this
// process's alone, one gate for every account (they share this process's IP).
import { ConfigError, ipWeightSpent, type Config } from "../config/index.ts";
import { openRedis, redisTlsError, type RedisClient } from "../config/redis-connection.ts";
import { requireNoEviction } from "../config/redis-policy.ts";
import type { Logger } from "../log/logger.ts";
import { localWeightGate } from "./client-from-config.ts";
import { CatchUpShareGate } from "./catch-up-share.ts";
import { RedisReconnections } from "./redis-reconnections.ts";
import { RedisWeightGate } from "./redis-weight-gate.ts";
import { HeldBackMark, type WeightGate } from "./weight-gate.ts";

export interface BudgetGates {
  /** The gate of one account's requests. */
  forAccount(account: string): WeightGate;
  /** Lets pending budget bookkeeping land, then closes a connection opened here. */
  close(): Promise<void>;
}

/** How long a command waits for REDIS_URL to answer before it keeps its budget to itself. */
const CONNECT_TIMEOUT_MS = 3000;

/** Gates in Redis on `redis` (the caller owns it). */
export function redisBudgetGates(config: Config, redis: RedisClient, logger: Logger): BudgetGates {
  const gates = new Map<string, CatchUpShareGate>();
  const prefix = config.worker.queuePrefix;
  const egress = config.worker.egressId;
  const onBackgroundError = (account: string) => (err: unknown, op: string) =>
    logger.warn(
      { account, op, err: (err as Error).message },
      "weight budget bookkeeping failed (charges expire on their own)",
    );
  // One share budget per egress, in Redis: every process of the egress draws from it. Its UID side
  // is never charged (a catching-up request costs it nothing); it exists because a gate has two sides.
  const ipLimit = ipWeightSpent(config.rateLimit);
  const shareLimit = Math.max(10, Math.floor(ipLimit * config.rateLimit.backfillIpShare));
  // Any account's request held back by the egress's IP budget tells every account of this process
  // that the budget sets the pace (their clients stop sending ahead: no hedges, one window at a time).
  const ipPressure = new HeldBackMark();
  // Info, not a warning: the outage that caused it was warned of once (outage-log.ts).
  const reconnections = new RedisReconnections(redis, () =>
    logger.info(
      { holdMs: config.rateLimit.windowMs },
      "Redis reconnected: the exchange's weight budgets send nothing for one window, " +
        "as Redis may have forgotten charges (a failover, a restart)",
    ),
  );
  const share = new RedisWeightGate({
    redis,
    ip: { key: `${prefix}:weight:catch-up:${egress}`, limit: shareLimit },
    uid: { key: `${prefix}:weight:catch-up-none:${egress}`, limit: config.rateLimit.uidWeight },
    windowMs: config.rateLimit.windowMs,
    maxInFlightMs: config.exchange.timeoutMs,
    onBackgroundError: onBackgroundError("(catching up)"),
    reconnections,
  });
  const mains: RedisWeightGate[] = [];
  return {
    forAccount(account) {
      let gate = gates.get(account);
      if (gate === undefined) {
        const main = new RedisWeightGate({
          redis,
          ip: { key: `${prefix}:weight:ip:${egress}`, limit: ipLimit },
          ipPressure,
          uid: { key: `${prefix}:weight:uid:${account}`, limit: config.rateLimit.uidWeight },
          windowMs: config.rateLimit.windowMs,
          maxInFlightMs: config.exchange.timeoutMs,
          onBackgroundError: onBackgroundError(account),
          reconnections,
        });
        mains.push(main);
        gate = new CatchUpShareGate(main, share);
        gates.set(account, gate);
      }
      return gate;
    },
    close: async () => {
      reconnections.close();
      await Promise.allSettled([...mains, share].map((g) => g.drain()));
    },
  };
}

/**
 * The gates of a one-shot command: in Redis when REDIS_URL is set and answers, else in-process.
 * An unreachable Redis is a warning, not a failure: the command keeps to the configured budget,
 * and 429s from what it cannot see are back-pressure (http-client.ts). A Redis that answers but
 * would evict the budgets, or whose certificate does not verify, is refused (a ConfigError).
 */
export async function commandBudgetGates(config: Config, logger: Logger): Promise<BudgetGates> {
  if (config.redisUrl) {
    const url = config.redisUrl;
    const redis = openRedis(config, {
      url,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      connectTimeout: CONNECT_TIMEOUT_MS,
    });
    // Reported below, or by the bookkeeping warnings. connect() rejects with "Connection is
    // closed": a TLS failure is known only from its error event.
    let tlsFailure: Error | undefined;
    redis.on("error", (err) => (tlsFailure ??= redisTlsError(err, url, config)));
    try {
      try {
        await redis.connect();
      } catch (err) {
        throw tlsFailure ?? err;
      }
      await requireNoEviction(redis, url, config, logger);
      const gates = redisBudgetGates(config, redis, logger);
      return {
        forAccount: gates.forAccount,
        close: async () => {
          await gates.close();
          await redis.quit().catch(() => redis.disconnect());
        },
      };
    } catch (err) {
      redis.disconnect();
      if (err instanceof ConfigError) throw err;
      logger.warn(
        { err: (err as Error).message },
        "REDIS_URL does not answer: this command keeps its weight budget to itself",
      );
    }
  }
  const gate = localWeightGate(config);
  return { forAccount: () => gate, close: async () => {} };
}
