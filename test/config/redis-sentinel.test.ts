// @module-tag redis
// Redis Sentinel through the one connection factory, against a master, a replica and a sentinel
// started here on loopback (test/support/redis-sentinel.ts): the configuration's rules, the start
// check reading the master's policy, and work resuming on the new master after `SENTINEL FAILOVER`
// and after a kill -9 of the master, no job lost (the scenarios of test/support/infra).
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.ts";
import { openRedis, reconnectOnReadonly } from "../../src/config/redis-connection.ts";
import { requireNoEviction } from "../../src/config/redis-policy.ts";
import { createLogger } from "../../src/log/logger.ts";
import { redisServerFeatures, startConfiguredRedis } from "../support/configured-redis.ts";
import {
  redisSentinelFailover,
  redisSentinelFailoverBackfill,
  redisSentinelKillBackfill,
  redisSentinelMasterKill,
} from "../support/infra/redis-failover.ts";
import { startRedisSentinel } from "../support/redis-sentinel.ts";

const log = (line: string) => void process.stdout.write(`  ${line}\n`);

describe("REDIS_SENTINELS configuration", () => {
  const url = { REDIS_URL: "redis://127.0.0.1:6379" };
  it("refuses the list without the name and the name without the list", () => {
    expect(() => loadConfig({ ...url, REDIS_SENTINELS: "127.0.0.1:26379" })).toThrow(
      /REDIS_SENTINELS is set without REDIS_SENTINEL_NAME/,
    );
    expect(() => loadConfig({ ...url, REDIS_SENTINEL_NAME: "ls" })).toThrow(
      /REDIS_SENTINEL_NAME is set without REDIS_SENTINELS/,
    );
    expect(() => loadConfig({ ...url, REDIS_SENTINEL_PASSWORD: "x" })).toThrow(ConfigError);
  });

  it("parses the list, and refuses an entry that is not host:port", () => {
    const config = loadConfig({ ...url, REDIS_SENTINELS: "127.0.0.1:26379, [::1]:26380", REDIS_SENTINEL_NAME: "ls" });
    expect(config.redis.sentinel).toEqual({
      sentinels: [
        { host: "127.0.0.1", port: 26379 },
        { host: "::1", port: 26380 },
      ],
      name: "ls",
      password: undefined,
    });
    expect(() => loadConfig({ ...url, REDIS_SENTINELS: "127.0.0.1", REDIS_SENTINEL_NAME: "ls" })).toThrow(
      /REDIS_SENTINELS "127.0.0.1" is not host:port/,
    );
  });

  it("reconnects on READONLY only", () => {
    expect(reconnectOnReadonly(new Error("READONLY You can't write against a read only replica."))).toBe(2);
    expect(reconnectOnReadonly(new Error("OOM command not allowed"))).toBe(false);
  });
});

describe.skipIf(!redisServerFeatures().present)("Redis Sentinel", () => {
  it("connects to the master the sentinels name (REDIS_URL's host unused) and checks its policy", async () => {
    const set = await startRedisSentinel();
    const config = loadConfig({
      REDIS_URL: "redis://127.0.0.1:1",
      REDIS_SENTINELS: set.sentinels,
      REDIS_SENTINEL_NAME: set.name,
    });
    const redis = openRedis(config, { maxRetriesPerRequest: 1 });
    try {
      const check = await requireNoEviction(redis, "redis://127.0.0.1:1", config, createLogger("silent"));
      expect(check).toMatchObject({ policy: "noeviction", overridden: false });
      expect(await redis.info("server")).toContain(`tcp_port:${await set.masterPort()}`);
      // The master, not the replica: a write is accepted.
      expect(await redis.set("ls-sentinel-probe", "1")).toBe("OK");
    } finally {
      redis.disconnect();
      await set.stop();
    }
  }, 60_000);

  it("opens every connection with the READONLY rule, through the sentinels too", () => {
    const config = loadConfig({
      REDIS_URL: "redis://127.0.0.1:1",
      REDIS_SENTINELS: "127.0.0.1:2",
      REDIS_SENTINEL_NAME: "x",
    });
    const redis = openRedis(config, { lazyConnect: true }) as Redis;
    expect(redis.options.sentinels).toEqual([{ host: "127.0.0.1", port: 2 }]);
    expect(redis.options.name).toBe("x");
    expect(redis.options.reconnectOnError).toBe(reconnectOnReadonly);
    redis.disconnect();
  });

  it("a write refused with READONLY (the server turned replica) is resent after reconnecting", async () => {
    const [a, b] = await Promise.all([startConfiguredRedis([]), startConfiguredRedis([])]);
    const admin = new Redis(a.url, { maxRetriesPerRequest: 1 });
    const redis = openRedis(loadConfig({ REDIS_URL: a.url }), { maxRetriesPerRequest: null });
    try {
      await redis.set("k", "before");
      // A demoted, as a failover does to the old master; its clients stay connected.
      await admin.call("REPLICAOF", "127.0.0.1", String(b.port));
      const write = redis.set("k", "after");
      const settled = await Promise.race([
        write.then(
          () => "written",
          (e: Error) => e.message,
        ),
        sleep(1500),
      ]);
      // Without the rule the write fails at once with READONLY; with it, it waits to be resent.
      expect(settled).toBeUndefined();
      await admin.call("REPLICAOF", "NO", "ONE");
      expect(await write).toBe("OK");
      expect(await admin.get("k")).toBe("after");
    } finally {
      admin.disconnect();
      redis.disconnect();
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it("SENTINEL FAILOVER during work: the jobs follow the new master, none lost", async () => {
    const r = await redisSentinelFailover({ small: true, log });
    expect(r.line).toMatch(/jobs lost 0 /);
    expect(r.ok, r.line).toBe(true);
  }, 120_000);

  it("kill -9 of the master during work: the jobs follow the new master, none lost", async () => {
    const r = await redisSentinelMasterKill({ small: true, log });
    expect(r.line).toMatch(/jobs lost 0 /);
    expect(r.ok, r.line).toBe(true);
  }, 120_000);

  it("SENTINEL FAILOVER during the worker's backfill: it resumes, the bills end exact", async () => {
    const r = await redisSentinelFailoverBackfill({ small: true, log });
    expect(r.line).toMatch(/bills exact/);
    expect(r.ok, r.line).toBe(true);
  }, 180_000);

  it("kill -9 of the master during the worker's backfill: it resumes, the bills end exact", async () => {
    const r = await redisSentinelKillBackfill({ small: true, log });
    expect(r.line).toMatch(/bills exact/);
    expect(r.ok, r.line).toBe(true);
  }, 180_000);
});
