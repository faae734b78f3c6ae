import { describe, expect, it } from "vitest";
import {
  ConfigError,
  ipWeightSpent,
  loadConfig,
  parseInstant,
  requireCredentials,
  requireDatabaseUrl,
} from "../../src/config/index.ts";

describe("configuration", () => {
  it("applies the documented defaults", () => {
    const before = Date.now();
    const c = loadConfig({});
    expect(c.exchange.baseUrl).toBe("https://api-contract.weex.com");
    expect(c.exchange.locale).toBe("en-US");
    expect(c.accountName).toBe("default");
    expect(c.coinIds).toEqual([]);
    expect(c.lookbackMs).toBe(600_000);
    expect(c.rateLimit).toEqual({
      ipWeight: 500,
      uidWeight: 500,
      windowMs: 10_000,
      backfillIpShare: 0.5,
      ipHeadroom: 0.1,
    });
    // The gates spend 90% of the IP budget by default.
    expect(ipWeightSpent(c.rateLimit)).toBe(450);
    expect(ipWeightSpent({ ...c.rateLimit, ipWeight: 1 })).toBe(1);
    expect(ipWeightSpent({ ...c.rateLimit, ipHeadroom: 0 })).toBe(500);
    expect(c.logLevel).toBe("info");
    // BACKFILL_FROM defaults to 90 days ago.
    expect(before - c.backfillFromMs).toBeGreaterThanOrEqual(90 * 86_400_000 - 1000);
    expect(before - c.backfillFromMs).toBeLessThan(90 * 86_400_000 + 1000);
  });

  it("reads every variable", () => {
    const c = loadConfig({
      DATABASE_URL: "postgresql://u:p@h:5432/d",
      REDIS_URL: "redis://127.0.0.1:6379",
      EXCHANGE_BASE_URL: "http://127.0.0.1:8787/",
      EXCHANGE_API_KEY: "k",
      EXCHANGE_API_SECRET: "s",
      EXCHANGE_API_PASSPHRASE: "p",
      EXCHANGE_LOCALE: "zh-CN",
      ACCOUNT_NAME: "main",
      SYNC_COIN_IDS: "2, 5,2",
      COIN_NAMES: "2=USDT, 1 = USDC,2=USDT",
      BACKFILL_FROM: "2026-01-01",
      SYNC_LOOKBACK_MS: "60000",
      RATE_LIMIT_IP_WEIGHT: "100",
      RATE_LIMIT_UID_WEIGHT: "200",
      RATE_LIMIT_WINDOW_MS: "1000",
      LOG_LEVEL: "DEBUG",
    });
    expect(c).toMatchObject({
      databaseUrl: "postgresql://u:p@h:5432/d",
      redisUrl: "redis://127.0.0.1:6379",
      accountName: "main",
      coinIds: ["2", "5"],
      coinNames: { "2": "USDT", "1": "USDC" },
      backfillFromMs: Date.UTC(2026, 0, 1),
      lookbackMs: 60_000,
      rateLimit: { ipWeight: 100, uidWeight: 200, windowMs: 1000 },
      logLevel: "debug",
      exchange: {
        baseUrl: "http://127.0.0.1:8787",
        locale: "zh-CN",
        credentials: { apiKey: "k", apiSecret: "s", passphrase: "p" },
      },
    });
  });

  it.each([
    ["EXCHANGE_BASE_URL", "http://api-contract.weex.com", /EXCHANGE_BASE_URL must use https/],
    ["EXCHANGE_BASE_URL", "ftp://x", /EXCHANGE_BASE_URL/],
    ["EXCHANGE_BASE_URL", "not a url", /EXCHANGE_BASE_URL is not a URL/],
    ["DATABASE_URL", "mysql://x", /DATABASE_URL must start with postgresql/],
    ["REDIS_URL", "localhost:6379", /REDIS_URL/],
    ["SYNC_COIN_IDS", "2,usdt", /SYNC_COIN_IDS .*"usdt"/],
    ["COIN_NAMES", "USDT=2", /COIN_NAMES must be a comma-separated list of coinId=NAME pairs .*"USDT=2"/],
    ["COIN_NAMES", "2=USDT,2=USDC", /COIN_NAMES names coin id 2 twice/],
    ["BACKFILL_FROM", "yesterday", /BACKFILL_FROM must be an ISO date/],
    ["SYNC_LOOKBACK_MS", "-5", /SYNC_LOOKBACK_MS/],
    ["SYNC_LOOKBACK_MS", "0", /SYNC_LOOKBACK_MS must be at least 60000/],
    ["SYNC_LOOKBACK_MS", "59999", /SYNC_LOOKBACK_MS must be at least 60000/],
    ["RATE_LIMIT_IP_WEIGHT", "0", /RATE_LIMIT_IP_WEIGHT/],
    ["RATE_LIMIT_UID_WEIGHT", "1e3", /RATE_LIMIT_UID_WEIGHT/],
    ["RATE_LIMIT_WINDOW_MS", "ten", /RATE_LIMIT_WINDOW_MS/],
    ["LOG_LEVEL", "loud", /LOG_LEVEL must be one of/],
    ["ACCOUNT_NAME", "my account", /ACCOUNT_NAME/],
    ["EXCHANGE_LOCALE", "english please", /EXCHANGE_LOCALE/],
  ])("refuses %s=%j with a message naming it", (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });

  it("names each missing credential and a missing DATABASE_URL", () => {
    const env = { EXCHANGE_API_KEY: "k" };
    expect(() => requireCredentials(loadConfig(env), env)).toThrow(
      "EXCHANGE_API_SECRET, EXCHANGE_API_PASSPHRASE are required",
    );
    expect(() => requireDatabaseUrl(loadConfig({}))).toThrow(/DATABASE_URL is required/);
  });

  it("parses instants as UTC dates, date-times or epoch ms", () => {
    expect(parseInstant("2026-03-01")).toBe(Date.UTC(2026, 2, 1));
    expect(parseInstant("2026-03-01T10:00:00")).toBe(Date.UTC(2026, 2, 1, 10));
    expect(parseInstant("2026-03-01T10:00:00+02:00")).toBe(Date.UTC(2026, 2, 1, 8));
    expect(parseInstant("1700000000000")).toBe(1700000000000);
    expect(parseInstant("2026-13-45")).toBeUndefined();
    expect(parseInstant("soon")).toBeUndefined();
  });
});
