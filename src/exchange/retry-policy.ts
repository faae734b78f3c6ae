// When to try a request again, and how long to wait first.

export interface BackoffOptions {
  /** First retry waits up to this long (full jitter). */
  baseMs: number;
  /** No wait exceeds this. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 30_000 };

/**
 * Exponential backoff with "full jitter": a random wait in [base/2, base·2^attempt), capped.
 * Jitter spreads the retries of several workers so they do not hit the exchange in lockstep.
 */
export function backoffDelay(attempt: number, opts: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.max(0, attempt - 1));
  const floor = Math.min(ceiling, opts.baseMs / 2);
  return Math.round(floor + random() * (ceiling - floor));
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | string[] | undefined, now: number): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}
