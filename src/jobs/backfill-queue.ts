// Queueing a planned backfill and asking after its windows: the BullMQ side of `ledger-sync
// backfill` (the CLI stays free of queue details).
import { Queue } from "bullmq";
import type { RedisClient } from "../config/redis-connection.ts";
import type { BackfillWindow } from "./backfill-plan.ts";
import { QUEUE_STREAMS, type BullmqOptions, type JobData } from "./queues.ts";

export interface RetryPolicy {
  attempts: number;
  backoff: { type: "exponential" | "fixed"; delay: number };
}

/** A window retries with backoff before it counts as failed (exchange outages, restarts). */
export const BACKFILL_RETRY: RetryPolicy = { attempts: 5, backoff: { type: "exponential", delay: 2000 } };

export class BackfillQueue {
  private readonly queue: Queue<JobData["backfill"]>;

  constructor(
    redis: RedisClient,
    prefix: string,
    private readonly retry: RetryPolicy = BACKFILL_RETRY,
    bullmq: BullmqOptions = { skipVersionCheck: false },
  ) {
    this.queue = new Queue<JobData["backfill"]>("backfill", {
      connection: redis,
      prefix,
      streams: QUEUE_STREAMS,
      ...bullmq,
    });
  }

  /** Errors of the queue's Redis connections (without a listener, BullMQ prints each one). */
  onError(listener: (err: Error) => void): void {
    this.queue.on("error", listener);
  }

  /**
   * Adds every window; ids are deterministic, so windows already queued or done are not added
   * again. Windows that had failed (an id BullMQ keeps) are retried: rerunning the command is how
   * an operator resumes a backfill after fixing the cause.
   */
  async enqueue(windows: BackfillWindow[]): Promise<{ retried: number }> {
    await this.queue.addBulk(
      windows.map((w) => ({ name: "backfill", data: w.data, opts: { jobId: w.jobId, ...this.retry } })),
    );
    let retried = 0;
    for (const job of await Promise.all(windows.map((w) => this.queue.getJob(w.jobId)))) {
      if (job && (await job.isFailed())) {
        await job.retry("failed");
        retried++;
      }
    }
    return { retried };
  }

  /**
   * Windows that failed after their last attempt: id and reason. One read of the failed set per
   * call (the watcher polls every second), not one request per window.
   */
  async failedWindows(windows: BackfillWindow[]): Promise<{ id: string; reason: string }[]> {
    const ids = new Set(windows.map((w) => w.jobId));
    return (await this.queue.getFailed())
      .filter((j) => ids.has(String(j.id)) && j.attemptsMade >= (j.opts.attempts ?? 1))
      .map((j) => ({ id: String(j.id), reason: j.failedReason }));
  }

  /** Milliseconds the finished windows could not prove complete (from their results). */
  async unverifiedMilliseconds(windows: BackfillWindow[]): Promise<number[]> {
    const jobs = await Promise.all(windows.map((w) => this.queue.getJob(w.jobId)));
    return jobs.flatMap(
      (j) => (j?.returnvalue as { unverifiedMilliseconds?: number[] } | undefined)?.unverifiedMilliseconds ?? [],
    );
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
