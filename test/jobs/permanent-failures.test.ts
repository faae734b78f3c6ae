// @module-tag redis
// An exchange refusal no retry can fix fails the BullMQ job at once, with its reason; a transient
// failure still uses every attempt. Real BullMQ on a real Redis, through the instrument wrapper
// every processor runs in.
import { Queue, QueueEvents, Worker, type Job } from "bullmq";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExchangeApiError, ExchangeUnavailableError } from "../../src/exchange/errors.ts";
import { instrument } from "../../src/jobs/instrument.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let r: TestRedis;
let connection: Redis;
beforeAll(async () => {
  r = await createTestRedis();
  connection = new Redis(r.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  await connection.quit();
  await r.cleanup();
});

async function failOnce(name: string, error: () => Error): Promise<Job> {
  const prefix = `${r.prefix}_${name}`;
  const queue = new Queue(name, { connection, prefix });
  const events = new QueueEvents(name, { connection: new Redis(r.url, { maxRetriesPerRequest: null }), prefix });
  const processor = instrument<{ account: string }>(
    name,
    async () => {
      throw error();
    },
    pino({ level: "silent" }),
    createMetrics({ defaultMetrics: false }),
  );
  const worker = new Worker(name, processor as (job: Job) => Promise<unknown>, { connection, prefix });
  try {
    await events.waitUntilReady();
    const job = await queue.add("bills", { account: "a" }, { attempts: 3, backoff: { type: "fixed", delay: 50 } });
    await job.waitUntilFinished(events, 20_000).catch(() => undefined);
    return (await queue.getJob(job.id!))!;
  } finally {
    await worker.close();
    await events.close();
    await events.disconnect();
    await queue.close();
  }
}

describe("failures no retry can fix", () => {
  it("a refusal by the exchange (bad key) fails the job at once, with its reason", async () => {
    const job = await failOnce("permanent", () => new ExchangeApiError("bills", 400, "40006", "Invalid ACCESS_KEY"));
    expect(await job.getState()).toBe("failed");
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toMatch(
      /ExchangeApiError: bills: exchange refused the request \(HTTP 400, code 40006\).*\(not retried: no retry can fix this\)/,
    );
  });

  it("a transient failure still uses every attempt", async () => {
    const job = await failOnce("transient", () => new ExchangeUnavailableError("bills", 6, "HTTP 502"));
    expect(await job.getState()).toBe("failed");
    expect(job.attemptsMade).toBe(3);
    expect(job.failedReason).toMatch(/gave up after 6 attempts/);
  });
});
