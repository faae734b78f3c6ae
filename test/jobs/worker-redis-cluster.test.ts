// @module-tag redis
// The worker on a Redis Cluster of three masters started here on loopback: QUEUE_PREFIX={ls} puts
// every key of ours and BullMQ's in one slot, so an account syncs with no CROSSSLOT; a prefix
// without a hash tag, and a cluster named without REDIS_CLUSTER=on, are refused at start (the
// scenario of test/support/infra/redis-cluster.ts). Also: every master's policy is checked.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, redisHashTag } from "../../src/config/index.ts";
import { openRedis } from "../../src/config/redis-connection.ts";
import { RedisEvictionPolicyError, requireNoEviction } from "../../src/config/redis-policy.ts";
import { createLogger } from "../../src/log/logger.ts";
import { redisServerFeatures } from "../support/configured-redis.ts";
import { redisClusterWorker } from "../support/infra/redis-cluster.ts";
import { startRedisCluster } from "../support/redis-cluster.ts";

const log = (line: string) => void process.stdout.write(`  ${line}\n`);

describe("REDIS_CLUSTER configuration", () => {
  it("takes a hash tag as Redis does", () => {
    expect(redisHashTag("{ls}")).toBe("ls");
    expect(redisHashTag("a{b}c{d}")).toBe("b");
    expect(redisHashTag("{}ls")).toBeUndefined();
    expect(redisHashTag("ledger-sync")).toBeUndefined();
  });

  it("refuses a QUEUE_PREFIX without a hash tag, and Sentinel with Cluster", () => {
    const env = { REDIS_URL: "redis://127.0.0.1:7000", REDIS_CLUSTER: "on" };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/QUEUE_PREFIX=ledger-sync has no hash tag.*CROSSSLOT.*QUEUE_PREFIX=\{ls\}/);
    expect(loadConfig({ ...env, QUEUE_PREFIX: "{ls}" }).redis.cluster).toBe(true);
    expect(() =>
      loadConfig({ ...env, QUEUE_PREFIX: "{ls}", REDIS_SENTINELS: "127.0.0.1:1", REDIS_SENTINEL_NAME: "x" }),
    ).toThrow(/choose one/);
    expect(() => loadConfig({ ...env, REDIS_CLUSTER: "maybe" })).toThrow(/REDIS_CLUSTER must be on or off/);
  });
});

describe.skipIf(!redisServerFeatures().present)("the worker on a Redis Cluster", () => {
  it("syncs through the cluster with QUEUE_PREFIX={ls}, no CROSSSLOT; refuses ledger-sync", async () => {
    const r = await redisClusterWorker({ small: true, log });
    expect(r.line).toMatch(/CROSSSLOT lines 0/);
    expect(r.ok, r.line).toBe(true);
  }, 180_000);

  it("checks the eviction policy of every master", async () => {
    // The third master evicts: a check of one node only would pass two times in three.
    const cluster = await startRedisCluster((i) => (i === 2 ? ["--maxmemory-policy", "volatile-lru"] : []));
    const config = loadConfig({ REDIS_URL: cluster.url, REDIS_CLUSTER: "on", QUEUE_PREFIX: "{ls}" });
    const redis = openRedis(config, { maxRetriesPerRequest: 1 });
    try {
      await new Promise((resolve) => redis.once("ready", resolve));
      const err = await requireNoEviction(redis, cluster.url, config, createLogger("silent")).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedisEvictionPolicyError);
      expect((err as Error).message).toContain(`127.0.0.1:${cluster.ports[2]} (cluster master) has maxmemory-policy`);
    } finally {
      redis.disconnect();
      await cluster.stop();
    }
  }, 60_000);
});
