// @module-tag redis
// The worker on a Redis configured as the managed services rent it, each a redis-server started
// here on loopback: volatile-lru is refused at boot before any queue key exists; accepted knowingly
// (REDIS_ACCEPT_EVICTION_POLICY) the worker runs, with our JSON warning and without BullMQ's own
// "IMPORTANT! Eviction policy" line on the console; and a Redis out of memory (a small maxmemory,
// noeviction, filled) turns /healthz unhealthy naming Redis OOM and ledger_sync_redis_writable to
// 0, until the filler is deleted: then healthy again and syncing, with no restart.
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { RedisEvictionPolicyError } from "../../src/config/redis-policy.ts";
import { startWorker, type RunningWorker } from "../../src/jobs/worker.ts";
import { createLogger } from "../../src/log/logger.ts";
import type { HealthReport } from "../../src/ops/health.ts";
import { sandboxExchangeEnv } from "../../src/sandbox/index.ts";
import { redisServerFeatures, startConfiguredRedis, type ConfiguredRedis } from "../support/configured-redis.ts";
import { useWorkerServices } from "../support/worker-services.ts";
import { capturingLogger } from "../support/capturing-logger.ts";

const services = useWorkerServices(313);
const started: ConfiguredRedis[] = [];
const clients: Redis[] = [];
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(started.map((s) => s.stop()));
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function redisServer(args: string[]): Promise<{ server: ConfiguredRedis; client: Redis }> {
  const server = await startConfiguredRedis(args);
  started.push(server);
  const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  clients.push(client);
  return { server, client };
}

function workerConfig(redisUrl: string, account: string, env: Record<string, string> = {}) {
  return loadConfig({
    ...sandboxExchangeEnv(services.sandbox.url),
    ACCOUNT_NAME: account,
    BACKFILL_FROM: String(services.sandbox.truth()[0]!.cTimeMs),
    DATABASE_URL: services.database.url,
    REDIS_URL: redisUrl,
    METRICS_PORT: "0",
    BILLS_INTERVAL_MS: "200",
    ...env,
  });
}

/** Polls `read` until `done` says so (at most `tries` times, 100 ms apart); returns the last value. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, tries = 300): Promise<T> {
  let v = await read();
  for (let i = 0; i < tries && !done(v); i++) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  return v;
}

const healthz = async (w: RunningWorker) => {
  const res = await fetch(`${w.metricsUrl}/healthz`);
  return { status: res.status, report: (await res.json()) as HealthReport };
};
const metricsText = async (w: RunningWorker) => (await fetch(`${w.metricsUrl}/metrics`)).text();

describe.skipIf(!redisServerFeatures().present)("the worker on a rented Redis", () => {
  it("refuses volatile-lru at boot, before any queue is used", async () => {
    const { server, client } = await redisServer(["--maxmemory-policy", "volatile-lru"]);
    const err = await startWorker(workerConfig(server.url, "evicting"), createLogger("silent")).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RedisEvictionPolicyError);
    expect((err as Error).message).toContain("has maxmemory-policy volatile-lru");
    expect(await client.dbsize()).toBe(0);
  });

  it("runs on volatile-lru accepted knowingly: our JSON warning, never BullMQ's console line", async () => {
    const { server } = await redisServer(["--maxmemory-policy", "volatile-lru"]);
    const printed: string[] = [];
    const keep = (...args: unknown[]) => void printed.push(args.map(String).join(" "));
    vi.spyOn(console, "warn").mockImplementation(keep);
    vi.spyOn(console, "log").mockImplementation(keep);
    vi.spyOn(console, "error").mockImplementation(keep);
    const { logger, lines } = capturingLogger();
    const config = workerConfig(server.url, "accepted", { REDIS_ACCEPT_EVICTION_POLICY: "volatile-lru" });
    const worker = await startWorker(config, logger);
    try {
      // Every queue's and worker's connection has opened once a scrape has counted the queues and a
      // bills job has run (the one at boot).
      await until(
        () => metricsText(worker),
        (t) => /ledger_sync_last_success_timestamp_seconds\{account="accepted",stream="bills"\}/.test(t),
      );
    } finally {
      await worker.stop("test done");
    }
    expect(printed.filter((p) => /Eviction policy/i.test(p))).toEqual([]);
    const warning = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.setting);
    expect(warning).toMatchObject({ level: 40, setting: "maxmemory-policy", policy: "volatile-lru" });
  });

  it("turns unhealthy while Redis is out of memory, and recovers by itself when memory is freed", async () => {
    const { server, client } = await redisServer(["--maxmemory-policy", "noeviction", "--maxmemory", "8mb"]);
    const worker = await startWorker(workerConfig(server.url, "oom"), createLogger("silent"));
    const writable = (v: 0 | 1) =>
      new RegExp(`ledger_sync_redis_writable\\{server="127\\.0\\.0\\.1:${server.port}"\\} ${v}\\n`);
    const lastBills = async () => {
      const m = /ledger_sync_last_success_timestamp_seconds\{account="oom",stream="bills"\} (\S+)/.exec(
        await metricsText(worker),
      );
      return m ? Number(m[1]) : 0;
    };
    try {
      expect(
        (
          await until(
            () => healthz(worker),
            (h) => h.status === 200,
          )
        ).status,
      ).toBe(200);
      expect(
        await until(
          () => metricsText(worker),
          (t) => writable(1).test(t),
        ),
      ).toMatch(writable(1));

      // Fill Redis until it refuses writes.
      const filler = "x".repeat(64 * 1024);
      let n = 0;
      for (;;) {
        try {
          await client.set(`filler:${n}`, filler);
          n++;
        } catch (err) {
          expect((err as Error).message).toMatch(/^OOM command not allowed/);
          break;
        }
      }
      // Filled to the brim, a key expiring (a job lock, the probe's own) would let writes in again
      // for a moment: hold Redis well past its limit until the memory is freed below.
      await client.config("SET", "maxmemory", "1mb");
      const sick = await until(
        () => healthz(worker),
        (h) => h.status === 503,
      );
      expect(sick.status).toBe(503);
      const check = sick.report.checks.find((c) => c.name === "redis-memory");
      expect(check).toMatchObject({ ok: false });
      expect(check!.detail).toMatch(/^Redis OOM: out of memory, it refuses writes \(OOM command not allowed/);
      // Redis itself still answers: only the write check fails.
      expect(sick.report.checks.find((c) => c.name === "redis")).toMatchObject({ ok: true });
      expect(await metricsText(worker)).toMatch(writable(0));

      // Free the memory: no restart, the worker is healthy again and syncs.
      await client.config("SET", "maxmemory", "8mb");
      await client.del(...Array.from({ length: n }, (_, i) => `filler:${i}`));
      const freedAt = Date.now() / 1000;
      expect(
        (
          await until(
            () => healthz(worker),
            (h) => h.status === 200,
          )
        ).status,
      ).toBe(200);
      expect(await metricsText(worker)).toMatch(writable(1));
      expect(await until(lastBills, (t) => t > freedAt)).toBeGreaterThan(freedAt);
    } finally {
      await worker.stop("test done");
    }
  });
});
