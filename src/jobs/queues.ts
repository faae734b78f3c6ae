// The queues, one per kind of work, and the data each job carries. BullMQ wiring only: jobs call
// the streams; nothing below src/jobs knows about BullMQ.
import { Queue, type ConnectionOptions } from "bullmq";
import type { EvictionPolicy } from "../config/redis-policy.ts";

export const QUEUE_NAMES = ["bills", "snapshots", "backfill"] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface JobData {
  bills: { account: string };
  snapshots: { account: string };
  /**
   * One window of a backfill: [fromMs, toMs] of one account. `previous` is the window before it:
   * windows run in time order, because a same-millisecond split draws its symbol candidates from
   * the bills stored before it (streams/bills-v2/millisecond-split.ts).
   */
  backfill: {
    account: string;
    fromMs: number;
    toMs: number;
    backfillId: string;
    previous?: { fromMs: number; toMs: number };
    next?: { fromMs: number; toMs: number };
  };
}

/**
 * Events kept per queue's event stream (BullMQ's default: 10,000). Every Queue object writes this
 * into the queue's meta when it connects, so each of ours passes it (QUEUE_STREAMS).
 */
export const EVENTS_MAX_LEN = 500;
export const QUEUE_STREAMS = { events: { maxLen: EVENTS_MAX_LEN } };

export type Queues = { [Q in QueueName]: Queue<JobData[Q]> };

/** BullMQ options every Queue and Worker of a process takes, from its start check of Redis. */
export interface BullmqOptions {
  skipVersionCheck: boolean;
}

/**
 * BullMQ reads INFO as each of its connections opens and prints "IMPORTANT! Eviction policy is ..."
 * with console.warn, outside the JSON log, for any policy but noeviction. Where the start check
 * (config/redis-policy.ts) let another policy through knowingly, and logged that as a warning,
 * BullMQ's version check is skipped so the line is never printed; BullMQ then assumes Redis 5
 * (blocking timeouts in whole seconds, older scripts that still work).
 */
export function bullmqOptions(eviction: EvictionPolicy): BullmqOptions {
  return { skipVersionCheck: eviction.policy !== "noeviction" };
}

export function createQueues(
  connection: ConnectionOptions,
  prefix: string,
  options: BullmqOptions = { skipVersionCheck: false },
): Queues {
  const make = <Q extends QueueName>(name: Q) =>
    new Queue<JobData[Q]>(name, {
      connection,
      prefix,
      ...options,
      // Redis holds work in flight, not history: every run is recorded in sync_runs (PostgreSQL),
      // so a completed job is kept only briefly, for a look with BullMQ's own tools, and the event
      // stream (read by nothing of ours) is trimmed short. At 1,000 accounts BullMQ's defaults
      // (10,000 events per queue) and 1,000 completed jobs cost ~6 MB (docs/design/fleet-bench.md).
      streams: QUEUE_STREAMS,
      defaultJobOptions: {
        // Failures retry with backoff; after the last attempt the job stays visible as failed
        // (with its reason) and the next scheduled run starts from the durable cursor anyway.
        attempts: 5,
        backoff: { type: "exponential", delay: 2000 },
        removeOnComplete: name === "backfill" ? { count: 1000, age: 7 * 86_400 } : { count: 100, age: 86_400 },
        removeOnFail: { count: 5000, age: 30 * 86_400 },
      },
    });
  return { bills: make("bills"), snapshots: make("snapshots"), backfill: make("backfill") };
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.all(Object.values(queues).map((q) => q.close()));
}
