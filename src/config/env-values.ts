// The value types of the environment variables (env-schema.ts): whole numbers, instants, coin
// lists, URLs, ports, on/off switches and credentials, each refusing bad text with a message that
// names what it expects.
import { z } from "zod";

export const DAY_MS = 86_400_000;

/** A whole number from text, at least `min`; refuses "1e3", "12abc", "" and values past 2^53. */
export const wholeNumber = (fallback: number, min: number) =>
  z
    .string()
    .trim()
    .regex(/^[0-9]+$/, "must be a whole number")
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n), "is too large")
    .refine((n) => n >= min, min === 1 ? "must be a positive whole number" : `must be at least ${min}`)
    .optional()
    .transform((n) => n ?? fallback);

export const positiveInt = (fallback: number) => wholeNumber(fallback, 1);
export const nonNegativeInt = (fallback: number) => wholeNumber(fallback, 0);

export const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === "" ? undefined : v));

/**
 * A credential: sent in a header or used as the signing key exactly as given, so white space
 * around it (a trailing newline from a secrets file) or a control character can only make every
 * request fail later with an authentication error. The message never shows the value.
 */
export const credential = optionalText.refine(
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

export const exchangeBaseUrl = z
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
export const instant = (fallbackMsAgo: number) =>
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

export const coinIds = z
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
export const coinNames = z
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

export const postgresUrl = z
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

export const redisUrl = z
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

/** host:port pairs, comma-separated (REDIS_SENTINELS), each port 1-65535; unset or empty: undefined. */
export const hostPorts = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === "") return undefined;
    const out: { host: string; port: number }[] = [];
    for (const item of v.split(",").map((s) => s.trim())) {
      const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})$/.exec(item);
      const port = m ? Number(m[2]) : 0;
      if (!m || port < 1 || port > 65535) {
        ctx.addIssue({ code: "custom", message: `"${item}" is not host:port (expected host:port,host:port)` });
        return z.NEVER;
      }
      out.push({ host: m[1]!.replace(/^\[(.*)\]$/, "$1"), port });
    }
    return out;
  });

/** on/off (true/false and 1/0 taken too), default off: "on" or "off". */
export const switchOnOff = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v.toLowerCase() : "off"))
  .pipe(
    z
      .enum(["on", "off", "true", "false", "1", "0"], { message: "must be on or off" })
      .transform((v): "on" | "off" => (v === "on" || v === "true" || v === "1" ? "on" : "off")),
  );

/** A TCP port, 0-65535 (0: any free port). */
export const port = (fallback: string) =>
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
export const onOff = z
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
export const consoleToken = optionalText.refine(
  (v) => v === undefined || /^[A-Za-z0-9._~+/=-]{16,512}$/.test(v),
  "must be 16-512 characters of A-Z a-z 0-9 . _ ~ + / = - (e.g. `openssl rand -hex 32`)",
);

/** An optional http(s) URL, e.g. a time-stamp authority's (its token is signed: plain http is fine). */
export const optionalHttpUrl = z
  .string()
  .trim()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === "") return undefined;
    const url = parseUrl(v, ctx, "is not a URL");
    if (!url) return z.NEVER;
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      ctx.addIssue({ code: "custom", message: "must be an http:// or https:// URL" });
      return z.NEVER;
    }
    return url.href;
  });
