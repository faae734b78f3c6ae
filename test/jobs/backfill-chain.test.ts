// @module-tag redis
// Backfill windows of one account run in time order, and a finished window starts its successor
// instead of leaving it to wait out its delay. Real Redis (BullMQ), PostgreSQL and the sandbox.
import { Queue, Worker, type Job } from "bullmq";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import type { ExchangeClient } from "../../src/exchange/http-client.ts";
import { planBackfill } from "../../src/jobs/backfill-plan.ts";
import { BackfillQueue } from "../../src/jobs/backfill-queue.ts";
import type { WorkerContext } from "../../src/jobs/context.ts";
import { processBackfillWindow } from "../../src/jobs/processors/backfill.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { createLeaseKeeper } from "../../src/store/lease-keeper.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";
import { sandboxClient } from "../support/sandbox-client.ts";

let t: MigratedDb;
let r: TestRedis;
let sandbox: Sandbox;
let client: ExchangeClient;

beforeAll(async () => {
  t = await createMigratedDb();
  r = await createTestRedis();
  sandbox = await startSandbox({ seed: 31, billCount: 3000, limits: null });
  client = sandboxClient(sandbox);
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  await r.cleanup();
  await t.close();
});

describe("a queued backfill", () => {
  it("runs an account's windows in order, each finished window starting the next, and ends exact", async () => {
    const truth = sandbox.truth();
    const from = truth[0]!.cTimeMs;
    const to = truth.at(-1)!.cTimeMs;
    const windows = planBackfill("chain", from, to, Math.ceil((to - from + 1) / 6));
    const ctx: WorkerContext = {
      config: loadConfig({ QUEUE_PREFIX: r.prefix, DATABASE_URL: t.url }),
      db: t.db,
      leases: createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "test worker" }),
      redis: r.client,
      accounts: new Map([
        [
          "chain",
          {
            account: {
              name: "chain",
              coinIds: [],
              backfillFromMs: from,
              credentials: DEFAULT_SANDBOX_CREDENTIALS,
              billsSource: "v2" as const,
            },
            client,
            stopped: new AbortController().signal,
          },
        ],
      ]),
      logger: pino({ level: "silent" }),
      metrics: createMetrics({ defaultMetrics: false }),
      forceStop: new AbortController().signal,
    };
    const backfill = new BackfillQueue(r.client, r.prefix);
    const queue = new Queue<JobData["backfill"]>("backfill", { connection: r.client, prefix: r.prefix });
    await backfill.enqueue(windows);
    // Several slots, so later windows are picked up (and step aside) while the first one runs.
    const worker = new Worker(
      "backfill",
      (job: Job<JobData["backfill"]>, token?: string) => processBackfillWindow(ctx, job, token, queue),
      {
        connection: r.client.duplicate(),
        prefix: r.prefix,
        concurrency: 4,
      },
    );
    try {
      await expect
        .poll(async () => (await queue.getJobCounts("completed")).completed, { timeout: 120_000, interval: 200 })
        .toBe(windows.length);
      const results = await Promise.all(
        windows.map(async (w) => (await queue.getJob(w.jobId))!.returnvalue as { successor: string }),
      );
      // Every window but the last found its successor; a waiting one was promoted.
      expect(results.at(-1)!.successor).toBe("none");
      for (const res of results.slice(0, -1)) expect(["promoted", "not waiting"]).toContain(res.successor);
      expect(results.some((res) => res.successor === "promoted")).toBe(true);
      const [{ n }] = (await t.db.$queryRawUnsafe<{ n: number }[]>(
        "SELECT count(*)::int AS n FROM bills WHERE account_name = 'chain'",
      )) as [{ n: number }];
      expect(n).toBe(truth.length);
    } finally {
      await worker.close();
      await queue.close();
      await backfill.close();
      await ctx.leases.close();
    }
  });
});
