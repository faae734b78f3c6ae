// Failed jobs per account, for `ledger-sync status`: how many, and the newest reason.
import { Queue } from "bullmq";
import type { RedisClient } from "../config/redis-connection.ts";
import { QUEUE_NAMES, QUEUE_STREAMS } from "./queues.ts";

export interface FailedJobs {
  count: number;
  lastError?: { queue: string; at: string; reason: string };
}

export async function failedJobsByAccount(
  redis: RedisClient,
  prefix: string,
  limit = 500,
): Promise<Record<string, FailedJobs>> {
  const out: Record<string, FailedJobs> = {};
  for (const name of QUEUE_NAMES) {
    // Reads only, with no script that depends on the server's version: BullMQ's version check is
    // skipped, and with it its "IMPORTANT! Eviction policy" line outside `status`'s own output.
    const queue = new Queue(name, { connection: redis, prefix, streams: QUEUE_STREAMS, skipVersionCheck: true });
    try {
      for (const job of await queue.getFailed(0, limit - 1)) {
        const account = String((job.data as { account?: unknown }).account ?? "?");
        const entry = (out[account] ??= { count: 0 });
        entry.count++;
        const at = new Date(job.finishedOn ?? job.timestamp).toISOString();
        if (!entry.lastError || at > entry.lastError.at)
          entry.lastError = { queue: name, at, reason: job.failedReason };
      }
    } finally {
      await queue.close();
    }
  }
  return out;
}
