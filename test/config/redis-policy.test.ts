// @module-tag redis
// The start check of Redis's maxmemory-policy against real redis-servers on loopback, each started
// here as a rented one may be configured: volatile-lru (the managed services' default) is refused
// naming the setting, its value, why and the fix; noeviction passes; with CONFIG renamed away (as
// ElastiCache does) the policy is read from INFO and still refused; where an ACL refuses INFO too the
// refusal says it could not be determined. REDIS_ACCEPT_EVICTION_POLICY lets exactly the named policy
// through, with a JSON warning in the log.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.ts";
import { openRedis, type RedisClient } from "../../src/config/redis-connection.ts";
import { readEvictionPolicy, RedisEvictionPolicyError, requireNoEviction } from "../../src/config/redis-policy.ts";
import { commandBudgetGates } from "../../src/exchange/budget-gates.ts";
import { redisServerFeatures, startConfiguredRedis, type ConfiguredRedis } from "../support/configured-redis.ts";
import { capturingLogger } from "../support/capturing-logger.ts";

const servers: Record<string, ConfiguredRedis> = {};
const clients: RedisClient[] = [];

function check(name: keyof typeof servers, env: Record<string, string> = {}) {
  const url = servers[name]!.url;
  const config = loadConfig({ REDIS_URL: url, ...env });
  const redis = openRedis(config, { maxRetriesPerRequest: 1 });
  clients.push(redis);
  const { logger, lines } = capturingLogger();
  return { run: () => requireNoEviction(redis, url, config, logger), lines, redis, config };
}

describe.skipIf(!redisServerFeatures().present)("maxmemory-policy at start", () => {
  beforeAll(async () => {
    const started = await Promise.all([
      startConfiguredRedis(["--maxmemory-policy", "volatile-lru"]),
      startConfiguredRedis(["--maxmemory-policy", "noeviction"]),
      startConfiguredRedis(["--maxmemory-policy", "volatile-lru", "--rename-command", "CONFIG", ""]),
      // An ACL that refuses both, as a provider's restricted user may (ioredis then skips its INFO ready check).
      startConfiguredRedis([
        "--maxmemory-policy",
        "allkeys-lru",
        "--user",
        "default",
        "on",
        "nopass",
        "~*",
        "&*",
        "+@all",
        "-config",
        "-info",
      ]),
    ]);
    [servers.volatile, servers.noeviction, servers.noConfig, servers.noConfigNoInfo] = started;
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await Promise.all(Object.values(servers).map((s) => s.stop()));
  });

  it("refuses volatile-lru, naming the setting, its value, why and how to fix it", async () => {
    const c = check("volatile");
    const err = await c.run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisEvictionPolicyError);
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).not.toContain("\n");
    expect(message).toContain(`Redis at 127.0.0.1:${servers.volatile!.port} has maxmemory-policy volatile-lru`);
    expect(message).toContain("needs noeviction, because an evicted key is a lost job");
    expect(message).toContain("weight-budget window");
    expect(message).toContain("set maxmemory-policy noeviction (on a managed Redis: in its parameter group");
    expect(message).toContain("REDIS_ACCEPT_EVICTION_POLICY=volatile-lru");
    expect(c.lines).toEqual([]);
  });

  it("passes noeviction, read with CONFIG GET", async () => {
    const c = check("noeviction");
    expect(await c.run()).toEqual({
      policy: "noeviction",
      source: "CONFIG GET maxmemory-policy",
      overridden: false,
    });
    expect(c.lines).toEqual([]);
  });

  it("reads the policy from INFO where CONFIG is renamed away, and refuses it", async () => {
    const c = check("noConfig");
    await expect(c.redis.config("GET", "maxmemory-policy")).rejects.toThrow(/unknown command/);
    expect(await readEvictionPolicy(c.redis)).toEqual({ policy: "volatile-lru", source: "INFO memory" });
    await expect(c.run()).rejects.toThrow(/has maxmemory-policy volatile-lru/);
  });

  it("refuses a policy that neither CONFIG nor INFO gives, saying it could not be determined", async () => {
    const c = check("noConfigNoInfo");
    const err = await c.run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisEvictionPolicyError);
    expect((err as Error).message).toMatch(
      /^could not determine the maxmemory-policy of Redis at 127\.0\.0\.1:\d+ \(CONFIG GET refused: NOPERM .*; INFO refused: NOPERM .*\)/,
    );
    expect((err as Error).message).toContain("REDIS_ACCEPT_EVICTION_POLICY=unknown to run on it knowingly");
  });

  it("REDIS_ACCEPT_EVICTION_POLICY lets exactly that policy through, with a JSON warning", async () => {
    const c = check("volatile", { REDIS_ACCEPT_EVICTION_POLICY: "volatile-lru" });
    expect(await c.run()).toMatchObject({ policy: "volatile-lru", overridden: true });
    expect(c.lines).toHaveLength(1);
    const line = JSON.parse(c.lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 40, setting: "maxmemory-policy", policy: "volatile-lru" });
    expect(String(line.msg)).toContain("REDIS_ACCEPT_EVICTION_POLICY=volatile-lru");
    // Another policy's name is no licence for this one; nor is `unknown` for a known policy.
    await expect(check("volatile", { REDIS_ACCEPT_EVICTION_POLICY: "allkeys-lru" }).run()).rejects.toThrow(
      RedisEvictionPolicyError,
    );
    await expect(check("volatile", { REDIS_ACCEPT_EVICTION_POLICY: "unknown" }).run()).rejects.toThrow(
      RedisEvictionPolicyError,
    );
    const unknown = check("noConfigNoInfo", { REDIS_ACCEPT_EVICTION_POLICY: "unknown" });
    expect(await unknown.run()).toMatchObject({ policy: "unknown", overridden: true });
    expect(unknown.lines).toHaveLength(1);
  });

  it("a command that keeps weight budgets in Redis refuses an evicting one", async () => {
    const { logger } = capturingLogger();
    const refused = loadConfig({ REDIS_URL: servers.volatile!.url });
    await expect(commandBudgetGates(refused, logger)).rejects.toThrow(/has maxmemory-policy volatile-lru/);
    const gates = await commandBudgetGates(loadConfig({ REDIS_URL: servers.noeviction!.url }), logger);
    await gates.close();
  });

  it("refuses a malformed REDIS_ACCEPT_EVICTION_POLICY at configuration", () => {
    expect(() => loadConfig({ REDIS_ACCEPT_EVICTION_POLICY: "Volatile LRU" })).toThrow(
      /REDIS_ACCEPT_EVICTION_POLICY must be the name of a maxmemory-policy/,
    );
  });
});
