// @module-tag redis
// rediss:// as a rented Redis serves it, on loopback: a redis-server listening for TLS only with a
// certificate for 127.0.0.1 signed by a throwaway CA. The right CA file connects; a wrong one, or
// Node's default CAs, or a host name the certificate does not name, is refused with one line that
// names the fix. A CA file that cannot be read, or one given with a plain redis:// URL, is a
// configuration error.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.ts";
import {
  openRedis,
  redisConnectionOptions,
  redisReady,
  RedisTlsError,
  type RedisConfig,
} from "../../src/config/redis-connection.ts";
import { requireNoEviction } from "../../src/config/redis-policy.ts";
import { commandBudgetGates } from "../../src/exchange/budget-gates.ts";
import { createLogger } from "../../src/log/logger.ts";
import {
  makeThrowawayCa,
  redisServerFeatures,
  startConfiguredRedis,
  type ConfiguredRedis,
  type ThrowawayCa,
} from "../support/configured-redis.ts";

const features = redisServerFeatures();
const silent = createLogger("silent");

/** Connects with `config` and resolves to PING's answer, or rejects with why it could not. */
async function ping(config: RedisConfig): Promise<string> {
  const redis = openRedis(config, { maxRetriesPerRequest: 1 });
  try {
    await redisReady(redis, config.redisUrl!, config);
    return await redis.ping();
  } finally {
    redis.disconnect();
  }
}

describe.skipIf(!features.tls)("rediss:// with REDIS_TLS_CA_FILE", () => {
  let right: ThrowawayCa;
  let wrong: ThrowawayCa;
  let server: ConfiguredRedis;
  beforeAll(async () => {
    right = makeThrowawayCa("right");
    wrong = makeThrowawayCa("wrong");
    server = await startConfiguredRedis(["--maxmemory-policy", "noeviction"], right);
  });
  afterAll(async () => {
    await server?.stop();
    right?.remove();
    wrong?.remove();
  });

  it("connects, verified against the CA file, and the start check reads the policy over TLS", async () => {
    const config = loadConfig({ REDIS_URL: server.url, REDIS_TLS_CA_FILE: right.caFile });
    expect(server.url).toMatch(/^rediss:\/\//);
    expect(await ping(config)).toBe("PONG");
    const redis = openRedis(config, { maxRetriesPerRequest: 1 });
    try {
      expect((await requireNoEviction(redis, server.url, config, silent)).policy).toBe("noeviction");
    } finally {
      redis.disconnect();
    }
  });

  it("never turns verification off", () => {
    const config = loadConfig({ REDIS_URL: server.url, REDIS_TLS_CA_FILE: right.caFile });
    const { options } = redisConnectionOptions(config);
    expect(options.tls).toBeDefined();
    expect(options.tls).not.toHaveProperty("rejectUnauthorized");
    const { options: defaults } = redisConnectionOptions(loadConfig({ REDIS_URL: server.url }));
    expect(defaults.tls).toEqual({});
  });

  it("refuses a certificate the CA file did not sign, naming REDIS_TLS_CA_FILE, without the password", async () => {
    const url = server.url.replace("rediss://", "rediss://:s3cret-pw@");
    const config = loadConfig({ REDIS_URL: url, REDIS_TLS_CA_FILE: wrong.caFile });
    const err = await ping(config).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RedisTlsError);
    const message = (err as Error).message;
    expect(message).not.toContain("\n");
    expect(message).not.toContain("s3cret-pw");
    expect(message).toContain(`127.0.0.1:${server.port}`);
    expect(message).toContain(`did not verify against REDIS_TLS_CA_FILE=${wrong.caFile}`);
    expect(message).toMatch(/set REDIS_TLS_CA_FILE to the PEM file of the CA that signed it/);
  });

  it("refuses it against Node's default CAs, saying to set REDIS_TLS_CA_FILE", async () => {
    const err = await ping(loadConfig({ REDIS_URL: server.url })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisTlsError);
    expect((err as Error).message).toMatch(/did not verify against Node's default CAs .*set REDIS_TLS_CA_FILE/);
  });

  it("refuses a host name the certificate does not name", async () => {
    const url = server.url.replace("127.0.0.1", "localhost");
    const err = await ping(loadConfig({ REDIS_URL: url, REDIS_TLS_CA_FILE: right.caFile })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisTlsError);
    expect((err as Error).message).toMatch(
      /certificate is not for host localhost \(it names IP Address:127\.0\.0\.1\): connect to a host name/,
    );
  });

  it("a command that calls the exchange fails with the line instead of keeping its budget to itself", async () => {
    const config = loadConfig({ REDIS_URL: server.url, REDIS_TLS_CA_FILE: wrong.caFile });
    await expect(commandBudgetGates(config, silent)).rejects.toThrow(RedisTlsError);
    const ok = await commandBudgetGates(loadConfig({ REDIS_URL: server.url, REDIS_TLS_CA_FILE: right.caFile }), silent);
    await ok.close();
  });
});

describe("REDIS_TLS_CA_FILE as configuration", () => {
  it("is refused with a redis:// (non-TLS) URL", () => {
    expect(() => loadConfig({ REDIS_URL: "redis://127.0.0.1:6379", REDIS_TLS_CA_FILE: "/etc/ssl/ca.pem" })).toThrow(
      /REDIS_TLS_CA_FILE is set but REDIS_URL is redis:\/\/ \(no TLS\)/,
    );
  });

  it("a file that cannot be read, or holds no certificate, is a ConfigError naming the variable and path", () => {
    const missing = "/nonexistent/ledger-sync-ca.pem";
    const config = loadConfig({ REDIS_URL: "rediss://127.0.0.1:6380", REDIS_TLS_CA_FILE: missing });
    expect(() => redisConnectionOptions(config)).toThrow(ConfigError);
    expect(() => redisConnectionOptions(config)).toThrow(`REDIS_TLS_CA_FILE=${missing} cannot be read (ENOENT)`);
    const ca = makeThrowawayCa("empty");
    try {
      const notPem = join(ca.dir, "not.pem");
      writeFileSync(notPem, "hello\n");
      const bad = loadConfig({ REDIS_URL: "rediss://127.0.0.1:6380", REDIS_TLS_CA_FILE: notPem });
      expect(() => redisConnectionOptions(bad)).toThrow(`REDIS_TLS_CA_FILE=${notPem} holds no PEM certificate`);
    } finally {
      ca.remove();
    }
  });
});
