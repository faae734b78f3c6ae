// @module-tag redis
import { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planBackfill } from "../../src/jobs/backfill-plan.ts";
import { BackfillQueue } from "../../src/jobs/backfill-queue.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let r: TestRedis;
beforeAll(async () => {
  r = await createTestRedis();
});
afterAll(async () => {
  await r.cleanup();
});

describe("backfill queue", () => {
  it("enqueueing twice adds nothing; a failed window is reported, then retried by enqueueing again", async () => {
    const q = new BackfillQueue(r.client, r.prefix, { attempts: 3, backoff: { type: "fixed", delay: 20 } });
    const windows = planBackfill("acct", 1_000_000, 1_000_000 + 3 * 86_400_000 - 1);
    await q.enqueue(windows);
    await q.enqueue(windows);
    const counts = await r.client.keys(`${r.prefix}:backfill:backfill_acct_*`);
    expect(counts.length).toBe(3);

    let exchangeDown = true;
    const completed = new Set<string>();
    const worker = new Worker(
      "backfill",
      async (job) => {
        if (job.data.fromMs === windows[1]!.data.fromMs && exchangeDown) throw new Error("exchange unavailable");
        completed.add(String(job.id));
        return { ok: true };
      },
      { connection: r.client.duplicate(), prefix: r.prefix },
    );
    // Three attempts for the failing window, then it stays failed.
    await expect.poll(async () => (await q.failedWindows(windows)).length, { timeout: 20_000, interval: 200 }).toBe(1);
    expect((await q.failedWindows(windows))[0]).toEqual({ id: windows[1]!.jobId, reason: "exchange unavailable" });

    exchangeDown = false; // the operator fixed the cause, and reruns the command
    const { retried } = await q.enqueue(windows);
    expect(retried).toBe(1);
    await expect.poll(() => completed.size, { timeout: 20_000, interval: 100 }).toBe(3);
    expect(await q.failedWindows(windows)).toEqual([]);
    await worker.close();
    await q.close();
  });
});
