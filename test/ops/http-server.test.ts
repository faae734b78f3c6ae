// @module-tag redis
// The ops server over real loopback HTTP: Bull Board on a real bullmq queue in the test Redis,
// queue depth gauges refreshed before a scrape, and close() that does not wait on idle clients.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.ts";
import { startOpsServer, type OpsServerOptions } from "../../src/ops/http-server.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

const logger = createLogger("silent");

function options(over: Partial<OpsServerOptions> = {}): OpsServerOptions {
  return {
    port: 0,
    host: "127.0.0.1",
    metrics: createMetrics({ defaultMetrics: false }),
    health: async () => ({ ok: true, checks: [] }),
    logger,
    ...over,
  };
}

describe("ops http server", () => {
  let redis: TestRedis;
  let connection: Redis;
  let queue: Queue;

  beforeAll(async () => {
    redis = await createTestRedis();
    connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    queue = new Queue("ops-test", { connection, prefix: redis.prefix });
    await queue.add("bills", { account: "main" });
    await queue.add("bills", { account: "alt" }, { delay: 60_000 });
  });
  afterAll(async () => {
    await queue?.close();
    connection?.disconnect();
    await redis?.cleanup();
  });

  it("listens on port 0 and reports the real port in its url", async () => {
    const server = await startOpsServer(options());
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.port).toBeGreaterThan(0);
      expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    } finally {
      await server.close();
    }
  });

  it("defaults to all interfaces and gives a loopback url for it", async () => {
    const { host: _omit, ...rest } = options();
    const server = await startOpsServer(rest);
    try {
      expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("rejects when the port is taken", async () => {
    const first = await startOpsServer(options());
    try {
      await expect(startOpsServer(options({ port: first.port }))).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });

  it("mounts Bull Board at /queues when asked, showing the real queue", async () => {
    const server = await startOpsServer(options({ queues: [queue], bullBoard: true }));
    try {
      const page = await fetch(`${server.url}/queues`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(await page.text()).toMatch(/<html/i);

      const api = await fetch(`${server.url}/queues/api/queues`);
      expect(api.status).toBe(200);
      const body = (await api.json()) as { queues: { name: string; counts: Record<string, number> }[] };
      const q = body.queues.find((x) => x.name === "ops-test");
      expect(q).toBeDefined();
      expect(q!.counts).toMatchObject({ waiting: 1, delayed: 1 });
    } finally {
      await server.close();
    }
  });

  it("answers 404 at /queues when Bull Board is off (or has no queues)", async () => {
    for (const over of [{ queues: [queue], bullBoard: false }, { queues: [queue] }, { bullBoard: true }] as const) {
      const server = await startOpsServer(options(over));
      try {
        expect((await fetch(`${server.url}/queues`)).status).toBe(404);
        expect((await fetch(`${server.url}/queues/api/queues`)).status).toBe(404);
      } finally {
        await server.close();
      }
    }
  });

  it("refreshes queue depth gauges from the real queue before each scrape", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const server = await startOpsServer(options({ metrics, beforeScrape: () => metrics.refreshQueueDepths([queue]) }));
    try {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      expect(text).toContain('ledger_sync_queue_jobs{queue="ops-test",state="waiting"} 1');
      expect(text).toContain('ledger_sync_queue_jobs{queue="ops-test",state="delayed"} 1');
      expect(text).toContain('ledger_sync_queue_jobs{queue="ops-test",state="active"} 0');

      await queue.add("bills", { account: "third" });
      const again = await (await fetch(`${server.url}/metrics`)).text();
      expect(again).toContain('ledger_sync_queue_jobs{queue="ops-test",state="waiting"} 2');
    } finally {
      await server.close();
    }
  });

  it("still serves metrics when the beforeScrape hook fails", async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.billsWritten("main", 1);
    const server = await startOpsServer(
      options({
        metrics,
        beforeScrape: async () => {
          throw new Error("redis down");
        },
      }),
    );
    try {
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('ledger_sync_bills_written_total{account="main"} 1');
    } finally {
      await server.close();
    }
  });

  it("closes promptly with an open keep-alive connection", async () => {
    const server = await startOpsServer(options());
    const agent = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
    try {
      const res = await request(`${server.url}/healthz`, { dispatcher: agent });
      expect(res.statusCode).toBe(200);
      expect(res.headers.connection).toBe("keep-alive");
      await res.body.text();
      // The socket stays open in the agent's pool now.
      const started = Date.now();
      await server.close();
      expect(Date.now() - started).toBeLessThan(4000); // not the 5 s keep-alive timeout
      // A second close() is the same promise, not an error.
      await server.close();
      await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    } finally {
      await agent.close();
    }
  });

  it("closes within the grace period even while a request hangs", async () => {
    let hookCalled!: () => void;
    const called = new Promise<void>((r) => (hookCalled = r));
    const server = await startOpsServer(
      options({
        closeGraceMs: 200,
        beforeScrape: () => {
          hookCalled();
          return new Promise<void>(() => {});
        },
      }),
    );
    const agent = new Agent();
    try {
      const pending = request(`${server.url}/metrics`, { dispatcher: agent }).then(
        () => "answered",
        () => "dropped",
      );
      await called;
      const started = Date.now();
      await server.close();
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(150);
      expect(took).toBeLessThan(1500);
      expect(await pending).toBe("dropped");
    } finally {
      await agent.close();
    }
  });
});
