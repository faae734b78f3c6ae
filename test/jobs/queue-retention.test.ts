// @module-tag redis
// Redis holds work in flight, not history (issue 25: Redis per account at 1,000 accounts). Every
// Queue object of ours writes the short event stream into the queue's meta, so a command that opens
// a queue (failed jobs for status, the backfill queue) does not put BullMQ's default back; completed
// incremental jobs are kept briefly. Real Redis.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BackfillQueue } from "../../src/jobs/backfill-queue.ts";
import { failedJobsByAccount } from "../../src/jobs/failed-jobs.ts";
import { closeQueues, createQueues, EVENTS_MAX_LEN, type Queues } from "../../src/jobs/queues.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let r: TestRedis;
let queues: Queues;
beforeAll(async () => {
  r = await createTestRedis();
  queues = createQueues(r.client, r.prefix);
});
afterAll(async () => {
  await closeQueues(queues);
  await r.cleanup();
});

const metaMaxLen = async (queue: string) => r.client.hget(`${r.prefix}:${queue}:meta`, "opts.maxLenEvents");

describe("what the queues keep in Redis", () => {
  it("a short event stream, kept short by every queue object that opens it", async () => {
    await queues.bills.waitUntilReady();
    await queues.bills.getJobCounts();
    expect(await metaMaxLen("bills")).toBe(String(EVENTS_MAX_LEN));
    await failedJobsByAccount(r.client, r.prefix);
    const backfill = new BackfillQueue(r.client, r.prefix);
    expect(await backfill.failedWindows([])).toEqual([]);
    await backfill.close();
    for (const q of ["bills", "snapshots", "backfill"]) expect(await metaMaxLen(q)).toBe(String(EVENTS_MAX_LEN));
    await queues.bills.addBulk(
      Array.from({ length: 3 * EVENTS_MAX_LEN }, (_, i) => ({ name: "bills", data: { account: `a${i}` } })),
    );
    // BullMQ trims with XADD MAXLEN ~ (whole stream nodes of 100 entries): about the length, never BullMQ's 10,000.
    expect(await r.client.xlen(`${r.prefix}:bills:events`)).toBeLessThanOrEqual(EVENTS_MAX_LEN + 200);
  });

  it("completed incremental jobs briefly, completed backfill windows longer, failures a month", () => {
    expect(queues.bills.defaultJobOptions.removeOnComplete).toEqual({ count: 100, age: 86_400 });
    expect(queues.snapshots.defaultJobOptions.removeOnComplete).toEqual({ count: 100, age: 86_400 });
    expect(queues.backfill.defaultJobOptions.removeOnComplete).toEqual({ count: 1000, age: 7 * 86_400 });
    expect(queues.bills.defaultJobOptions.removeOnFail).toEqual({ count: 5000, age: 30 * 86_400 });
  });
});
