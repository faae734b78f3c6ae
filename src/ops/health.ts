// Health of the worker for /healthz: Redis and PostgreSQL reachable, Redis accepting writes (not
// out of memory), and every stream of every account synced recently. Each probe has a timeout, so
// a hung dependency is reported as failing instead of hanging the health check (and the
// orchestrator's probe) with it.

export interface HealthCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface HealthReport {
  ok: boolean;
  checks: HealthCheck[];
}

export interface LastSuccess {
  account: string;
  stream: string;
  /** When the stream last completed successfully; null when it never has. */
  at: Date | null;
}

export interface HealthDeps {
  redisPing: () => Promise<void>;
  /** A write to Redis (redisWriteProbe): fails while Redis refuses writes, e.g. out of memory. */
  redisWrite?: () => Promise<void>;
  postgresPing: () => Promise<void>;
  lastSuccess: () => Promise<LastSuccess[]>;
  /** A stream whose last success is older than this fails its check. */
  maxAgeMs: number;
  /**
   * When the process started: a stream that never succeeded fails only once the process has been up
   * longer than maxAgeMs.
   */
  startedAt: Date;
  now?: () => Date;
  /** Timeout of each probe (pings and lastSuccess). Default 2000 ms. */
  timeoutMs?: number;
}

export const DEFAULT_PROBE_TIMEOUT_MS = 2000;

export class ProbeTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} timed out after ${ms} ms`);
    this.name = "ProbeTimeoutError";
  }
}

/** The promise of `fn()`, or a ProbeTimeoutError after `ms`. A synchronous throw becomes a rejection. */
export async function withTimeout<T>(what: string, ms: number, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeoutError(what, ms)), ms);
  });
  try {
    return await Promise.race([Promise.resolve().then(fn), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function describe(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length) {
    // e.g. a connect to "localhost" tried on ::1 and 127.0.0.1: the message alone is empty.
    return err.errors.map(describe).join("; ");
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const message = err.message || err.name;
    return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
  }
  return String(err);
}

async function probe(name: string, ms: number, fn: () => Promise<void>): Promise<HealthCheck> {
  try {
    await withTimeout(name, ms, fn);
    return { name, ok: true, detail: "reachable" };
  } catch (err) {
    return { name, ok: false, detail: `unreachable: ${describe(err)}` };
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}

function streamCheck(s: LastSuccess, now: Date, startedAt: Date, maxAgeMs: number): HealthCheck {
  const name = `sync:${s.account}/${s.stream}`;
  const limit = `limit ${seconds(maxAgeMs)}`;
  if (s.at === null) {
    const up = now.getTime() - startedAt.getTime();
    return up > maxAgeMs
      ? { name, ok: false, detail: `never succeeded; up ${seconds(up)} (${limit})` }
      : { name, ok: true, detail: `no success yet; within startup grace (up ${seconds(up)}, ${limit})` };
  }
  const age = now.getTime() - s.at.getTime();
  return {
    name,
    ok: age <= maxAgeMs,
    detail:
      `${age <= maxAgeMs ? "last success" : "stale: last success"} ${s.at.toISOString()}, ` +
      `${seconds(Math.max(0, age))} ago (${limit})`,
  };
}

/** Redis's refusal of a write for want of memory: "OOM command not allowed when used memory > 'maxmemory'". */
export function isRedisOom(err: unknown): boolean {
  return err instanceof Error && /^OOM /.test(err.message);
}

/** The redis-memory check: a Redis out of memory is named as such, with what to do. */
async function redisWriteCheck(ms: number, fn: () => Promise<void>): Promise<HealthCheck> {
  const name = "redis-memory";
  try {
    await withTimeout(name, ms, fn);
    return { name, ok: true, detail: "writes accepted" };
  } catch (err) {
    return {
      name,
      ok: false,
      detail: isRedisOom(err)
        ? `Redis OOM: out of memory, it refuses writes (${describe(err)}); free memory or raise maxmemory`
        : `a write was not accepted: ${describe(err)}`,
    };
  }
}

export async function checkHealth(deps: HealthDeps): Promise<HealthReport> {
  const ms = deps.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const [redis, redisWrite, postgres, sync] = await Promise.all([
    probe("redis", ms, deps.redisPing),
    deps.redisWrite ? redisWriteCheck(ms, deps.redisWrite) : undefined,
    probe("postgres", ms, deps.postgresPing),
    withTimeout("reading last successes", ms, deps.lastSuccess).then(
      (rows) => {
        const now = (deps.now ?? (() => new Date()))();
        return rows.map((s) => streamCheck(s, now, deps.startedAt, deps.maxAgeMs));
      },
      (err: unknown): HealthCheck[] => [
        { name: "sync", ok: false, detail: `could not read last successes: ${describe(err)}` },
      ],
    ),
  ]);
  const checks = [redis, ...(redisWrite ? [redisWrite] : []), postgres, ...sync];
  return { ok: checks.every((c) => c.ok), checks };
}

/**
 * Runs one raw SQL query and resolves to its rows, e.g. `(sql) => db.$queryRawUnsafe<unknown[]>(sql)`
 * or `(sql) => pool.query(sql).then((r) => r.rows)`.
 */
export type RawQuery = (sql: string) => Promise<unknown[]>;

const LAST_SUCCESS_SQL = `SELECT account_name, stream, updated_at FROM sync_state ORDER BY account_name, stream`;

function toDate(v: unknown): Date | null {
  if (v === null || v === undefined) return null;
  const d = v instanceof Date ? v : new Date(String(v));
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * Per (account_name, stream) of sync_state, when its cursor was last written (updated_at: every
 * committed window writes it). With `expected`, exactly those pairs, in that order: one without a
 * row comes back with `at: null`, so a configured stream that never succeeded is reported too.
 */
export async function postgresLastSuccess(
  query: RawQuery,
  expected?: readonly { account: string; stream: string }[],
): Promise<LastSuccess[]> {
  const rows = (await query(LAST_SUCCESS_SQL)) as Array<{ account_name: string; stream: string; updated_at: unknown }>;
  const out: LastSuccess[] = rows.map((r) => ({
    account: String(r.account_name),
    stream: String(r.stream),
    at: toDate(r.updated_at),
  }));
  if (expected === undefined) return out;
  // Only the streams the worker syncs now: a disabled or removed account's bookmark stops moving
  // for good, and must not fail every worker's health for it.
  const key = (x: { account: string; stream: string }) => `${x.account}\u0000${x.stream}`;
  const found = new Map(out.map((o) => [key(o), o]));
  return expected.map((e) => found.get(key(e)) ?? { account: e.account, stream: e.stream, at: null });
}

/** A postgres ping over the same raw-query function. */
export function postgresPing(query: RawQuery): () => Promise<void> {
  return async () => {
    await query("SELECT 1");
  };
}

/** A Redis ping on an ioredis-like client (anything with `ping()`). */
export function redisPing(client: { ping(): Promise<unknown> }): () => Promise<void> {
  return async () => {
    await client.ping();
  };
}

/** What redisWriteProbe needs of an ioredis client. */
export interface RedisSetter {
  set(key: string, value: string, px: "PX", ms: number): Promise<unknown>;
}

/**
 * A tiny SET with an expiry on `key` (this process's own). A ping is answered by a Redis out of
 * memory under noeviction; a write is refused ("OOM command not allowed"), as every job's and
 * budget's would be. `onResult` hears true when the write was accepted, false when Redis answered
 * with a refusal, and undefined when Redis did not answer (unreachable: its own check says so).
 */
export function redisWriteProbe(
  client: RedisSetter,
  key: string,
  onResult: (writable: boolean | undefined) => void = () => undefined,
): () => Promise<void> {
  return async () => {
    try {
      await client.set(key, String(process.pid), "PX", 60_000);
      onResult(true);
    } catch (err) {
      onResult(err instanceof Error && err.name === "ReplyError" ? false : undefined);
      throw err;
    }
  };
}
