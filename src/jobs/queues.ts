// The queues, one per kind of work, and the data each job carries. BullMQ wiring only: jobs call
// the streams; nothing below src/jobs knows about BullMQ.
import { Queue, type ConnectionOptions } from "bullmq";

export const QUEUE_NAMES = ["bills", "snapshots", "backfill"] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface JobData {
  bills: { account: string };
  snapshots: { account: string };
  /**
   * One window of a backfill: [fromMs, toMs] of one account. `previous` is the window before it:
   * windows run in time order, because a same-millisecond split draws its symbol candidates from
   * the bills stored before it (streams/bills/millisecond-split.ts).
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

export type Queues = { [Q in QueueName]: Queue<JobData[Q]> };

export function createQueues(connection: ConnectionOptions, prefix: string): Queues {
  const make = <Q extends QueueName>(name: Q) =>
    new Queue<JobData[Q]>(name, {
      connection,
      prefix,
      defaultJobOptions: {
        // Failures retry with backoff; after the last attempt the job stays visible as failed
        // (with its reason) and the next scheduled run starts from the durable cursor anyway.
        attempts: 5,
        backoff: { type: "exponential", delay: 2000 },
        removeOnComplete: { count: 1000, age: 7 * 86_400 },
        removeOnFail: { count: 5000, age: 30 * 86_400 },
      },
    });
  return { bills: make("bills"), snapshots: make("snapshots"), backfill: make("backfill") };
}

export async function closeQueues(queues: Queues): Promise<void> {
  await Promise.all(Object.values(queues).map((q) => q.close()));
}
