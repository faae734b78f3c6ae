// The environment variables ledger-sync reads, with defaults and validation. The names are a
// public contract (docs/configuration.md, docker-compose.yml, users' deployments); what each means,
// its default as users see it and who reads it are in env-docs.ts, which `npm run docs` publishes.
import { isIP } from "node:net";
import { z } from "zod";
import {
  DAY_MS,
  wholeNumber,
  positiveInt,
  nonNegativeInt,
  optionalText,
  credential,
  exchangeBaseUrl,
  instant,
  coinIds,
  coinNames,
  postgresUrl,
  redisUrl,
  hostPorts,
  switchOnOff,
  port,
  onOff,
  consoleToken,
  optionalHttpUrl,
} from "./env-values.ts";

export { isLoopbackHost, parseInstant } from "./env-values.ts";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export const LOG_FORMATS = ["json", "pretty"] as const;
/** The endpoints the bills stream can read: v2 bills (the spec's), v3 income (paged by a cursor). */
export const BILLS_SOURCES = ["v2", "v3"] as const;

export const envSchema = z.object({
  DATABASE_URL: postgresUrl,
  REDIS_URL: redisUrl,
  // The PEM bundle of the CA(s) a rediss:// server's certificate is verified against (unset: Node's).
  REDIS_TLS_CA_FILE: optionalText,
  // Runs on a Redis whose maxmemory-policy is this one (or `unknown`: not readable) instead of
  // refusing it at start: an evicted key is a lost job, job lock or budget window.
  REDIS_ACCEPT_EVICTION_POLICY: optionalText.refine(
    (v) => v === undefined || /^[a-z][a-z-]{0,39}$/.test(v),
    "must be the name of a maxmemory-policy (e.g. volatile-lru) or unknown",
  ),
  // Redis Sentinel: the sentinels' host:port list and the master group's name, both or neither;
  // REDIS_URL then gives only the data nodes' password, db and TLS.
  REDIS_SENTINELS: hostPorts,
  REDIS_SENTINEL_NAME: optionalText.refine(
    (v) => v === undefined || /^[A-Za-z0-9_.-]{1,64}$/.test(v),
    "must be a master group name (1-64 letters, digits, '_', '.' or '-')",
  ),
  REDIS_SENTINEL_PASSWORD: credential,
  // Redis Cluster: REDIS_URL names one node; QUEUE_PREFIX must then hold a hash tag ({ls}).
  REDIS_CLUSTER: switchOnOff,
  EXCHANGE_BASE_URL: exchangeBaseUrl,
  EXCHANGE_API_KEY: credential,
  EXCHANGE_API_SECRET: credential,
  EXCHANGE_API_PASSPHRASE: credential,
  EXCHANGE_LOCALE: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : "en-US"))
    .pipe(z.string().regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, "must be a locale such as en-US")),
  ACCOUNT_NAME: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : "default"))
    .pipe(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be 1-64 letters, digits, '_', '.' or '-'")),
  SYNC_COIN_IDS: coinIds,
  COIN_NAMES: coinNames,
  BACKFILL_FROM: instant(90 * DAY_MS),
  // Below a minute, bills the exchange files a little late are never read again: refused.
  SYNC_LOOKBACK_MS: wholeNumber(600_000, 60_000),
  // Hours of recent bills the worker re-reads once a day per account (0: never).
  CROSS_CHECK_INTERVAL_MS: nonNegativeInt(0).refine(
    (n) => n === 0 || n >= 60_000,
    "must be 0 (off) or at least 60000 (a minute)",
  ),
  SYNC_RESWEEP_HOURS: nonNegativeInt(48).refine(
    (n) => n <= 24 * 366,
    "must be at most 8784 hours (0 turns the re-sweep off)",
  ),
  RATE_LIMIT_IP_WEIGHT: positiveInt(500),
  RATE_LIMIT_UID_WEIGHT: positiveInt(500),
  RATE_LIMIT_WINDOW_MS: positiveInt(10_000),
  // Where each close's anchor is written (close, anchors export) and read (verify): docs/design/audit-chain.md.
  ANCHOR_DIR: optionalText,
  // A time-stamp authority (RFC 3161) that stamps each anchor written.
  ANCHOR_TSA_URL: optionalHttpUrl,
  SNAPSHOT_HISTORY_RETENTION_DAYS: z
    .string()
    .trim()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return undefined; // keep history forever
      if (!/^[0-9]+$/.test(v) || Number(v) < 1 || Number(v) > 1_000_000) {
        ctx.addIssue({
          code: "custom",
          message: "must be a whole number of days (1 or more), or empty to keep history forever",
        });
        return z.NEVER;
      }
      return Number(v);
    }),
  // The shortest SNAPSHOT_HISTORY_RETENTION_DAYS accepted (index.ts refuses one below it): history
  // that records may have to be kept for is not pruned by a slip of a digit.
  SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS: wholeNumber(1827, 1).refine(
    (n) => n <= 1_000_000,
    "must be at most 1000000 days",
  ),
  ACCOUNTS_FILE: optionalText,
  // Sealed credentials of the accounts table (src/config/master-key.ts reads and checks them):
  // 32 bytes as 64 hex digits or base64, or the path of a file holding them (Docker/Kubernetes secrets).
  LEDGER_SYNC_MASTER_KEY: optionalText,
  LEDGER_SYNC_MASTER_KEY_FILE: optionalText,
  // `accounts rekey` only: the master key every account is re-wrapped under.
  LEDGER_SYNC_NEW_MASTER_KEY: optionalText,
  LEDGER_SYNC_NEW_MASTER_KEY_FILE: optionalText,
  // PostgreSQL connections one process opens at most: a pool of this minus one, and one the run
  // leases use only to take, renew or free them (docs/design/connections.md).
  DATABASE_POOL_MAX: wholeNumber(10, 2),
  // An account's run lease: renewed every third of it; a holder gone unseen frees it after this long.
  RUN_LEASE_MS: wholeNumber(30_000, 3_000),
  // Jobs one worker process runs at once, across every account; the rest wait in the queue, stalest first.
  WORKER_CONCURRENCY: positiveInt(50),
  // How often a worker re-reads the accounts table (added, disabled, removed, rotated accounts).
  ACCOUNTS_REFRESH_MS: wholeNumber(5_000, 100).refine((n) => n <= 10_000, "must be at most 10000 (10 s)"),
  // How often a worker's scheduler tick enqueues what is due (one tick at a time across workers).
  SCHEDULER_TICK_MS: wholeNumber(1_000, 50),
  BILLS_INTERVAL_MS: positiveInt(60_000),
  SNAPSHOT_INTERVAL_MS: positiveInt(300_000),
  SHUTDOWN_TIMEOUT_MS: positiveInt(30_000),
  METRICS_PORT: port("9464"),
  HEALTH_MAX_SYNC_AGE_MS: positiveInt(900_000),
  JOB_LOCK_DURATION_MS: positiveInt(30_000),
  BULL_BOARD_ENABLED: onOff,
  // The console (src/console): in the worker under /console on METRICS_PORT, or `ledger-sync console`.
  CONSOLE_ENABLED: onOff,
  CONSOLE_TOKEN: consoleToken,
  CONSOLE_HOST: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : "127.0.0.1"))
    .pipe(z.string().regex(/^[A-Za-z0-9.:_-]{1,253}$/, "must be a host name or an IP address")),
  CONSOLE_PORT: port("9470"),
  QUEUE_PREFIX: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : "ledger-sync"))
    .pipe(z.string().regex(/^[A-Za-z0-9_.{}-]{1,64}$/, "must be 1-64 letters, digits, '_', '.', '-', '{' or '}'")),
  // Part of Redis key names, and shown in logs: printable, no spaces.
  EGRESS_ID: optionalText.refine(
    (v) => v === undefined || /^[\x21-\x7e]{1,128}$/.test(v),
    "must be 1-128 printable characters without spaces",
  ),
  // The local address outgoing exchange connections leave from (a host with several public IPs);
  // EGRESS_ID names that address's weight budget.
  EGRESS_LOCAL_ADDRESS: optionalText.refine(
    (v) => v === undefined || isIP(v) !== 0,
    "must be an IP address of this host (e.g. 127.0.0.2 or 2001:db8::2)",
  ),
  // The share of the egress IP's weight budget that accounts catching up on history may take
  // together, so the others stay fresh while one backfills.
  BACKFILL_IP_SHARE: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : "0.5"))
    .pipe(z.string().regex(/^(0(\.[0-9]+)?|1(\.0+)?)$/, "must be a fraction from 0 to 1, e.g. 0.5"))
    .transform(Number)
    .refine((n) => n > 0, "must be more than 0 (0 would never let an account catch up)"),
  // The share of the IP weight budget left unspent: the gates admit up to (1 - headroom) of
  // RATE_LIMIT_IP_WEIGHT, leaving room for other software on the egress IP and for the exchange's
  // window not lining up with ours, so a fleet that could use the whole budget never presses on it.
  RATE_LIMIT_IP_HEADROOM: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : "0.1"))
    .pipe(z.string().regex(/^0(\.[0-9]+)?$/, "must be a fraction from 0 to 0.9, e.g. 0.1"))
    .transform(Number)
    .refine((n) => n <= 0.9, "must be a fraction from 0 to 0.9, e.g. 0.1"),
  // The exchange's limits when known up front (otherwise learnt from its refusals, issue 14).
  EXCHANGE_MAX_SPAN_MS: z
    .string()
    .trim()
    .regex(/^[0-9]+$/, "must be a whole number of milliseconds")
    .transform(Number)
    .refine(
      (n) => Number.isSafeInteger(n) && n >= 3,
      "must be at least 3 (a single millisecond asked with a margin each side)",
    )
    .optional(),
  EXCHANGE_HISTORY_DAYS: z
    .string()
    .trim()
    .regex(/^[0-9]+(\.[0-9]+)?$/, "must be a number of days (e.g. 90 or 0.5)")
    .transform(Number)
    .refine((n) => n > 0 && n <= 100_000, "must be more than 0 and at most 100000 days")
    .optional(),
  EXCHANGE_TIMEOUT_MS: positiveInt(15_000),
  EXCHANGE_MAX_ATTEMPTS: positiveInt(6),
  EXCHANGE_MAX_WAIT_MS: positiveInt(900_000),
  BILLS_SOURCE: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v.toLowerCase() : "v2"))
    .pipe(z.enum(BILLS_SOURCES, { message: `must be one of ${BILLS_SOURCES.join(", ")}` })),
  LOG_LEVEL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v.toLowerCase() : "info"))
    .pipe(z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(", ")}` })),
  // Empty: pretty lines when stderr is a terminal, JSON lines otherwise (decided by the logger).
  LOG_FORMAT: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v.toLowerCase() : undefined))
    .pipe(
      z
        .enum(LOG_FORMATS, {
          message: `must be one of ${LOG_FORMATS.join(", ")} (or empty: pretty on a terminal, json otherwise)`,
        })
        .optional(),
    ),
});

export type Env = z.output<typeof envSchema>;
