// The environment variables ledger-sync reads, with defaults and validation. The names are a
// public contract (README's configuration table, docker-compose.yml, users' deployments).
import { z } from "zod";

const DAY_MS = 86_400_000;

/** A whole number from text, at least `min`; refuses "1e3", "12abc", "" and values past 2^53. */
const wholeNumber = (fallback: number, min: number) =>
  z
    .string()
    .trim()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n), "is too large")
    .refine((n) => n >= min, min === 1 ? "must be a positive whole number" : `must be at least ${min}`)
    .optional()
    .transform((n) => n ?? fallback);

const positiveInt = (fallback: number) => wholeNumber(fallback, 1);
const nonNegativeInt = (fallback: number) => wholeNumber(fallback, 0);

const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === "" ? undefined : v));

/**
 * A credential: sent in a header or used as the signing key exactly as given, so white space
 * around it (a trailing newline from a secrets file) or a control character can only make every
 * request fail later with an authentication error. The message never shows the value.
 */
const credential = optionalText.refine(
  (v) => v === undefined || (v.trim() === v && !/[\u0000-\u001f\u007f]/.test(v)),
  "must not have white space around it or control characters in it (a trailing newline from a secrets file?)",
);

/** The URL, or undefined after recording `message` as the variable's issue. */
function parseUrl(text: string, ctx: z.RefinementCtx, message: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    ctx.addIssue({ code: "custom", message });
    return undefined;
  }
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** localhost, 127.0.0.0/8 or ::1: an address only this machine can reach. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

const exchangeBaseUrl = z
  .string()
  .trim()
  .optional()
  .transform((v, ctx) => {
    const url = parseUrl(v && v !== "" ? v : "https://api-contract.weex.com", ctx, "is not a URL");
    if (!url) return z.NEVER;
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      ctx.addIssue({ code: "custom", message: "must be an https:// URL" });
      return z.NEVER;
    }
    // Credentials and signatures travel in headers: plain http is only acceptable on this machine.
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
      ctx.addIssue({ code: "custom", message: "must use https (plain http is allowed only to loopback)" });
      return z.NEVER;
    }
    if (url.search || url.hash || url.username || url.password) {
      ctx.addIssue({ code: "custom", message: "must not carry a query, fragment or credentials" });
      return z.NEVER;
    }
    return url.origin + url.pathname.replace(/\/+$/, "");
  });

/** ISO date/time or epoch milliseconds; default: 90 days before now. */
const instant = (fallbackMsAgo: number) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === "") return Date.now() - fallbackMsAgo;
      const ms = parseInstant(v);
      if (ms === undefined) {
        ctx.addIssue({
          code: "custom",
          message: "must be an ISO date (2026-01-31 or 2026-01-31T12:00:00Z) or epoch milliseconds",
        });
        return z.NEVER;
      }
      return ms;
    });

/** Parses an ISO 8601 date/time or a whole number of epoch milliseconds. */
export function parseInstant(text: string): number | undefined {
  const t = text.trim();
  if (/^[0-9]{1,16}$/.test(t)) {
    const ms = Number(t);
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(
    t,
  );
  if (!m) return undefined;
  // Date.parse rolls impossible dates over ("2026-02-30" is March 2, "T24:00" the next day): refuse them.
  const [year, month, day, hour = 0, minute = 0, second = 0] = m
    .slice(1)
    .map((x) => (x === undefined ? undefined : Number(x)));
  const date = new Date(Date.UTC(year!, month! - 1, day!));
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month! - 1 ||
    date.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return undefined;
  // A date without a zone means UTC: books are kept in UTC, not in the server's local time.
  const withZone = /T|\s/.test(t) && !/(Z|[+-]\d{2}:?\d{2})$/.test(t) ? `${t}Z` : t;
  const ms = Date.parse(withZone.replace(" ", "T"));
  return Number.isFinite(ms) ? ms : undefined;
}

const coinIds = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === "") return [] as string[];
    const parts = v.split(",").map((p) => p.trim());
    const bad = parts.find((p) => !/^[0-9]+$/.test(p));
    if (bad !== undefined) {
      ctx.addIssue({
        code: "custom",
        message: `must be a comma-separated list of numeric coin ids (bad entry: "${bad}")`,
      });
      return z.NEVER;
    }
    return [...new Set(parts)];
  });

// "2=USDT,1=USDC": the API gives collateral by coin id and bills by coin name, and neither endpoint
// says which is which; verify's cross-checks between the two need the pairing.
const coinNames = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const names: Record<string, string> = {};
    if (v === undefined || v.trim() === "") return names;
    for (const part of v.split(",").map((p) => p.trim())) {
      const m = /^([0-9]+)\s*=\s*([A-Za-z0-9_.-]{1,32})$/.exec(part);
      if (!m) {
        ctx.addIssue({
          code: "custom",
          message: `must be a comma-separated list of coinId=NAME pairs such as 2=USDT,1=USDC (bad entry: "${part}")`,
        });
        return z.NEVER;
      }
      if (names[m[1]!] !== undefined && names[m[1]!] !== m[2]) {
        ctx.addIssue({ code: "custom", message: `names coin id ${m[1]} twice ("${names[m[1]!]}" and "${m[2]}")` });
        return z.NEVER;
      }
      names[m[1]!] = m[2]!;
    }
    return names;
  });

const postgresUrl = z
  .string()
  .trim()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === "") return undefined;
    const url = parseUrl(v, ctx, "is not a URL (expected postgresql://user:password@host:port/database)");
    if (!url) return z.NEVER;
    if (url.protocol !== "postgresql:" && url.protocol !== "postgres:") {
      ctx.addIssue({ code: "custom", message: "must start with postgresql://" });
      return z.NEVER;
    }
    return v;
  });

const redisUrl = z
  .string()
  .trim()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === "") return undefined;
    if (!/^rediss?:\/\//.test(v)) {
      ctx.addIssue({ code: "custom", message: "must start with redis:// or rediss://" });
      return z.NEVER;
    }
    const url = parseUrl(v, ctx, "is not a URL (expected redis://host:port)");
    if (!url) return z.NEVER;
    if (!url.hostname) {
      ctx.addIssue({ code: "custom", message: "has no host (expected redis://host:port)" });
      return z.NEVER;
    }
    return v;
  });

/** A TCP port, 0-65535 (0: any free port). */
const port = (fallback: string) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : fallback))
    .pipe(
      z
        .string()
        .regex(/^[0-9]{1,5}$/, "must be a port number")
        .transform(Number)
        .refine((n) => n <= 65535, "must be a port number (0-65535)"),
    );

/** true/false (or 1/0), default false. */
const onOff = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v.toLowerCase() : "false"))
  .pipe(
    z
      .enum(["true", "false", "1", "0"], { message: "must be true or false" })
      .transform((v) => v === "true" || v === "1"),
  );

// The console's bearer token: sent in a header, a query parameter and a cookie, so only characters
// none of them needs to escape; at least 16 of them, so it cannot be guessed (`openssl rand -hex 32`).
const consoleToken = optionalText.refine(
  (v) => v === undefined || /^[A-Za-z0-9._~+/=-]{16,512}$/.test(v),
  "must be 16-512 characters of A-Z a-z 0-9 . _ ~ + / = - (e.g. `openssl rand -hex 32`)",
);

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export const LOG_FORMATS = ["json", "pretty"] as const;
/** The endpoints the bills stream can read: v2 bills (the spec's), v3 income (paged by a cursor). */
export const BILLS_SOURCES = ["v2", "v3"] as const;

export const envSchema = z.object({
  DATABASE_URL: postgresUrl,
  REDIS_URL: redisUrl,
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
  ACCOUNTS_FILE: optionalText,
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
    .pipe(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be 1-64 letters, digits, '_', '.' or '-'")),
  // Part of Redis key names, and shown in logs: printable, no spaces.
  EGRESS_ID: optionalText.refine(
    (v) => v === undefined || /^[\x21-\x7e]{1,128}$/.test(v),
    "must be 1-128 printable characters without spaces",
  ),
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
