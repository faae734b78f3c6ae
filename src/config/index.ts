// Configuration: read the environment once, validate every variable, and hand typed values on.
import { hostname } from "node:os";
import { envSchema, type Env } from "./env-schema.ts";
import { loadMasterKey, MASTER_KEY_NAMES, NEW_MASTER_KEY_NAMES } from "./master-key.ts";

export { parseInstant } from "./env-schema.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

export interface ExchangeCredentials {
  apiKey: string;
  apiSecret: string;
  passphrase: string;
}

export interface RedisSentinelConfig {
  sentinels: { host: string; port: number }[];
  /** The master group's name, as in the sentinels' `sentinel monitor <name> ...`. */
  name: string;
  password: string | undefined;
}

/**
 * The hash tag of a Redis key as a cluster hashes it (the text between the first `{` and the first
 * `}` after it, when not empty), or undefined: then the whole key is hashed.
 */
export function redisHashTag(key: string): string | undefined {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

export interface Config {
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  redis: {
    /** REDIS_TLS_CA_FILE: the CA bundle a rediss:// server is verified against (undefined: Node's CAs). */
    tlsCaFile: string | undefined;
    /** REDIS_ACCEPT_EVICTION_POLICY: a maxmemory-policy other than noeviction run on knowingly, or "unknown". */
    acceptEvictionPolicy: string | undefined;
    /** REDIS_SENTINELS, REDIS_SENTINEL_NAME, REDIS_SENTINEL_PASSWORD: the master is asked of the sentinels. */
    sentinel: RedisSentinelConfig | undefined;
    /** REDIS_CLUSTER: REDIS_URL names one node of a Redis Cluster. */
    cluster: boolean;
  };
  accountName: string;
  coinIds: string[];
  /** Coin id -> coin name (COIN_NAMES), for verify's collateral cross-checks. */
  coinNames: Record<string, string>;
  exchange: {
    baseUrl: string;
    locale: string;
    credentials: ExchangeCredentials | undefined;
    timeoutMs: number;
    maxAttempts: number;
    /** EXCHANGE_MAX_WAIT_MS: longest one request is waited on while refused as too many (429). */
    maxWaitMs: number;
    /** EXCHANGE_MAX_SPAN_MS, EXCHANGE_HISTORY_DAYS (unset: learnt from the exchange's refusals). */
    limits: { maxSpanMs?: number; historyDays?: number };
  };
  rateLimit: {
    ipWeight: number;
    uidWeight: number;
    windowMs: number;
    /** BACKFILL_IP_SHARE: the share of the IP budget accounts catching up on history may take together. */
    backfillIpShare: number;
    /** RATE_LIMIT_IP_HEADROOM: the share of the IP budget never spent. */
    ipHeadroom: number;
  };
  /** BILLS_SOURCE: the endpoint the bills stream reads, for accounts that do not say. */
  billsSource: Env["BILLS_SOURCE"];
  backfillFromMs: number;
  lookbackMs: number;
  /** ANCHOR_DIR and ANCHOR_TSA_URL: where closes' anchors go, and who stamps them. */
  anchors: { dir?: string; tsaUrl?: string };
  /** CROSS_CHECK_INTERVAL_MS: how often the worker cross-checks each account's last day; 0: never. */
  crossCheckIntervalMs: number;
  /** SYNC_RESWEEP_HOURS in ms; 0: no daily re-sweep. */
  resweepMs: number;
  /** Days of snapshot history to keep; undefined keeps it forever. */
  snapshotRetentionDays: number | undefined;
  accountsFile: string | undefined;
  /** DATABASE_POOL_MAX: PostgreSQL connections one process opens at most. */
  database: {
    poolMax: number;
    /** RUN_LEASE_MS: an account run lease's length (renewed every third of it). */
    runLeaseMs: number;
  };
  worker: {
    /** WORKER_CONCURRENCY: jobs one worker process runs at once. */
    concurrency: number;
    /** ACCOUNTS_REFRESH_MS: how often the accounts table is re-read. */
    accountsRefreshMs: number;
    /** SCHEDULER_TICK_MS: how often due work is enqueued. */
    schedulerTickMs: number;
    billsIntervalMs: number;
    snapshotIntervalMs: number;
    shutdownTimeoutMs: number;
    metricsPort: number;
    healthMaxSyncAgeMs: number;
    /** How long a dead process's job and account lock hold before another process takes over. */
    jobLockDurationMs: number;
    bullBoard: boolean;
    queuePrefix: string;
    /** Names this process's egress IP: processes with the same id share the per-IP weight budget. */
    egressId: string;
    /** EGRESS_LOCAL_ADDRESS: the local address exchange connections are bound to (undefined: the OS picks). */
    egressLocalAddress: string | undefined;
  };
  /** The read-only web console (src/console). */
  console: {
    /** CONSOLE_ENABLED: the worker serves it under /console on METRICS_PORT. */
    enabled: boolean;
    /** CONSOLE_TOKEN: required wherever the console listens on more than loopback. */
    token: string | undefined;
    /** CONSOLE_HOST, CONSOLE_PORT: where `ledger-sync console` listens unless --host/--port say. */
    host: string;
    port: number;
  };
  logLevel: Env["LOG_LEVEL"];
  /** LOG_FORMAT; undefined lets the logger choose (pretty on a terminal, JSON otherwise). */
  logFormat: Env["LOG_FORMAT"];
}

/** Validates every variable; the error names each bad variable and why. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join("; ")}`);
  }
  const e = parsed.data;
  checkMasterKeys(env);
  // A CA file only verifies a TLS connection: with a plain redis:// URL it would be silently unused.
  if (e.REDIS_TLS_CA_FILE !== undefined && e.REDIS_URL?.startsWith("redis://"))
    throw new ConfigError(
      "REDIS_TLS_CA_FILE is set but REDIS_URL is redis:// (no TLS): use rediss:// to connect with TLS, " +
        "or unset REDIS_TLS_CA_FILE",
    );
  checkRedisMode(e);
  checkRetentionFloor(e);
  const creds = [e.EXCHANGE_API_KEY, e.EXCHANGE_API_SECRET, e.EXCHANGE_API_PASSPHRASE];
  return {
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redis: {
      tlsCaFile: e.REDIS_TLS_CA_FILE,
      acceptEvictionPolicy: e.REDIS_ACCEPT_EVICTION_POLICY,
      sentinel:
        e.REDIS_SENTINELS && e.REDIS_SENTINEL_NAME
          ? { sentinels: e.REDIS_SENTINELS, name: e.REDIS_SENTINEL_NAME, password: e.REDIS_SENTINEL_PASSWORD }
          : undefined,
      cluster: e.REDIS_CLUSTER === "on",
    },
    accountName: e.ACCOUNT_NAME,
    coinIds: e.SYNC_COIN_IDS,
    coinNames: e.COIN_NAMES,
    exchange: {
      baseUrl: e.EXCHANGE_BASE_URL,
      locale: e.EXCHANGE_LOCALE,
      credentials: creds.every((c) => c !== undefined)
        ? { apiKey: e.EXCHANGE_API_KEY!, apiSecret: e.EXCHANGE_API_SECRET!, passphrase: e.EXCHANGE_API_PASSPHRASE! }
        : undefined,
      timeoutMs: e.EXCHANGE_TIMEOUT_MS,
      maxAttempts: e.EXCHANGE_MAX_ATTEMPTS,
      maxWaitMs: e.EXCHANGE_MAX_WAIT_MS,
      limits: {
        ...(e.EXCHANGE_MAX_SPAN_MS === undefined ? {} : { maxSpanMs: e.EXCHANGE_MAX_SPAN_MS }),
        ...(e.EXCHANGE_HISTORY_DAYS === undefined ? {} : { historyDays: e.EXCHANGE_HISTORY_DAYS }),
      },
    },
    rateLimit: {
      ipWeight: e.RATE_LIMIT_IP_WEIGHT,
      uidWeight: e.RATE_LIMIT_UID_WEIGHT,
      windowMs: e.RATE_LIMIT_WINDOW_MS,
      backfillIpShare: e.BACKFILL_IP_SHARE,
      ipHeadroom: e.RATE_LIMIT_IP_HEADROOM,
    },
    billsSource: e.BILLS_SOURCE,
    backfillFromMs: e.BACKFILL_FROM,
    lookbackMs: e.SYNC_LOOKBACK_MS,
    resweepMs: e.SYNC_RESWEEP_HOURS * 3_600_000,
    anchors: {
      ...(e.ANCHOR_DIR ? { dir: e.ANCHOR_DIR } : {}),
      ...(e.ANCHOR_TSA_URL ? { tsaUrl: e.ANCHOR_TSA_URL } : {}),
    },
    crossCheckIntervalMs: e.CROSS_CHECK_INTERVAL_MS,
    snapshotRetentionDays: e.SNAPSHOT_HISTORY_RETENTION_DAYS,
    accountsFile: e.ACCOUNTS_FILE,
    database: { poolMax: e.DATABASE_POOL_MAX, runLeaseMs: e.RUN_LEASE_MS },
    worker: {
      concurrency: e.WORKER_CONCURRENCY,
      accountsRefreshMs: e.ACCOUNTS_REFRESH_MS,
      schedulerTickMs: e.SCHEDULER_TICK_MS,
      billsIntervalMs: e.BILLS_INTERVAL_MS,
      snapshotIntervalMs: e.SNAPSHOT_INTERVAL_MS,
      shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
      metricsPort: e.METRICS_PORT,
      healthMaxSyncAgeMs: e.HEALTH_MAX_SYNC_AGE_MS,
      jobLockDurationMs: e.JOB_LOCK_DURATION_MS,
      bullBoard: e.BULL_BOARD_ENABLED,
      queuePrefix: e.QUEUE_PREFIX,
      egressId: e.EGRESS_ID ?? hostname(),
      egressLocalAddress: e.EGRESS_LOCAL_ADDRESS,
    },
    console: { enabled: e.CONSOLE_ENABLED, token: e.CONSOLE_TOKEN, host: e.CONSOLE_HOST, port: e.CONSOLE_PORT },
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
  };
}

/**
 * Sentinel needs both its list and its master's name; a sentinel password alone would be unused.
 * On a cluster every key of one Lua script, MULTI or MGET must hash to one slot (else CROSSSLOT):
 * BullMQ's and ours all start with QUEUE_PREFIX, so its hash tag puts them all in one slot.
 */
function checkRedisMode(e: Env): void {
  if ((e.REDIS_SENTINELS === undefined) !== (e.REDIS_SENTINEL_NAME === undefined))
    throw new ConfigError(
      e.REDIS_SENTINELS === undefined
        ? "REDIS_SENTINEL_NAME is set without REDIS_SENTINELS: set both (the sentinels' host:port list) or neither"
        : "REDIS_SENTINELS is set without REDIS_SENTINEL_NAME: set both (the master group name) or neither",
    );
  if (e.REDIS_SENTINEL_PASSWORD !== undefined && e.REDIS_SENTINELS === undefined)
    throw new ConfigError("REDIS_SENTINEL_PASSWORD is set without REDIS_SENTINELS: set both or neither");
  if (e.REDIS_CLUSTER === "on" && e.REDIS_SENTINELS !== undefined)
    throw new ConfigError(
      "REDIS_CLUSTER=on and REDIS_SENTINELS are both set: a Redis Cluster fails over by itself, choose one",
    );
  if (e.REDIS_CLUSTER === "on" && redisHashTag(e.QUEUE_PREFIX) === undefined)
    throw new ConfigError(clusterPrefixRefusal(e.QUEUE_PREFIX));
}

/**
 * A retention below the floor would prune history that records may have to be kept for: refused at
 * start, so a slip of a digit never reaches the worker's deletes.
 */
function checkRetentionFloor(e: Env): void {
  const days = e.SNAPSHOT_HISTORY_RETENTION_DAYS;
  const floor = e.SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS;
  if (days !== undefined && days < floor)
    throw new ConfigError(
      `SNAPSHOT_HISTORY_RETENTION_DAYS=${days} is below SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS=${floor}: ` +
        "snapshot history would be pruned sooner than the records it holds may have to be kept; " +
        "raise SNAPSHOT_HISTORY_RETENTION_DAYS (empty keeps history forever), " +
        "or lower SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS if a shorter period binds you",
    );
}

/** Why a QUEUE_PREFIX without a hash tag cannot run on a Redis Cluster, and the fix. */
export function clusterPrefixRefusal(prefix: string): string {
  return (
    `QUEUE_PREFIX=${prefix} has no hash tag ({...}): on a Redis Cluster (REDIS_CLUSTER=on) the keys of one ` +
    "queue operation and of one weight-budget script would hash to different slots, and Redis refuses those " +
    "with CROSSSLOT. " +
    "Fix: QUEUE_PREFIX={ls} (any name in braces; every key then lands in one slot)"
  );
}

/** The Redis URL, or an error naming the variable (the worker and queued backfills need it). */
export function requireRedisUrl(config: Config): string {
  if (!config.redisUrl) throw new ConfigError("REDIS_URL is required (redis://host:port)");
  return config.redisUrl;
}

/** The database URL, or an error naming the variable (commands that touch Postgres call this). */
export function requireDatabaseUrl(config: Config): string {
  if (!config.databaseUrl)
    throw new ConfigError("DATABASE_URL is required (postgresql://user:password@host:port/database)");
  return config.databaseUrl;
}

/** The exchange credentials, or an error naming each missing variable. */
export function requireCredentials(config: Config, env: NodeJS.ProcessEnv = process.env): ExchangeCredentials {
  if (config.exchange.credentials) return config.exchange.credentials;
  const missing = ["EXCHANGE_API_KEY", "EXCHANGE_API_SECRET", "EXCHANGE_API_PASSPHRASE"].filter((n) => !env[n]);
  throw new ConfigError(`${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} required to call the exchange`);
}

/**
 * A master key given in a bad form is refused with the rest of the configuration, before any work,
 * whether or not this command goes on to open sealed credentials.
 */
function checkMasterKeys(env: NodeJS.ProcessEnv): void {
  for (const names of [MASTER_KEY_NAMES, NEW_MASTER_KEY_NAMES]) loadMasterKey(env, names);
}

/** The IP weight the gates admit per window: RATE_LIMIT_IP_WEIGHT less its headroom, at least 1. */
export function ipWeightSpent(rateLimit: Config["rateLimit"]): number {
  return Math.max(1, Math.floor(rateLimit.ipWeight * (1 - rateLimit.ipHeadroom)));
}
