// Boot-time reconciliation of job schedulers with the configuration: every configured account
// has a bills scheduler (and a snapshots one when it has coin ids) at the configured interval, and
// a daily re-sweep of its recent bills (low priority, on the bills queue) unless turned off, and a
// cross-check of its last day when CROSS_CHECK_INTERVAL_MS is set (low priority, same queue);
// schedulers of accounts no longer configured are removed. upsertJobScheduler is idempotent, so
// several workers booting at once converge on the same set.
import type { AccountConfig } from "../config/accounts.ts";
import type { Queues } from "./queues.ts";

export interface SchedulerIntervals {
  billsMs: number;
  snapshotsMs: number;
  /** How often each account's recent bills are re-swept (undefined: never). */
  resweepMs?: number;
  /** How often each account's last day is cross-checked through the other endpoint (undefined: never). */
  crossCheckMs?: number;
}

export interface Reconciliation {
  added: string[];
  updated: string[];
  removed: string[];
}

/** The re-sweep runs once a day per account. */
export const RESWEEP_EVERY_MS = 86_400_000;
/** BullMQ priority of the re-sweep: after every waiting incremental job (1 is the highest). */
export const RESWEEP_PRIORITY = 100;

interface Wanted {
  account: string;
  every: number;
  name: "bills" | "snapshots" | "resweep" | "cross-check";
  priority?: number;
}

export async function reconcileSchedulers(
  queues: Queues,
  accounts: AccountConfig[],
  intervals: SchedulerIntervals,
): Promise<Reconciliation> {
  const result: Reconciliation = { added: [], updated: [], removed: [] };
  const bills = new Map<string, Wanted>(
    accounts.map((a) => [`bills:${a.name}`, { account: a.name, every: intervals.billsMs, name: "bills" }]),
  );
  if (intervals.resweepMs !== undefined) {
    for (const a of accounts)
      bills.set(`resweep:${a.name}`, {
        account: a.name,
        every: intervals.resweepMs,
        name: "resweep",
        priority: RESWEEP_PRIORITY,
      });
  }
  if (intervals.crossCheckMs !== undefined) {
    for (const a of accounts)
      bills.set(`cross-check:${a.name}`, {
        account: a.name,
        every: intervals.crossCheckMs,
        name: "cross-check",
        priority: RESWEEP_PRIORITY,
      });
  }
  const snapshots = new Map<string, Wanted>(
    accounts
      .filter((a) => a.coinIds.length > 0)
      .map((a) => [`snapshots:${a.name}`, { account: a.name, every: intervals.snapshotsMs, name: "snapshots" }]),
  );
  for (const { queue, want } of [
    { queue: queues.bills, want: bills },
    { queue: queues.snapshots, want: snapshots },
  ]) {
    const existing = new Map((await queue.getJobSchedulers(0, -1)).map((s) => [s.key, s]));
    for (const [id, w] of want) {
      const current = existing.get(id);
      if (current && Number(current.every) === w.every) continue;
      // Typed per queue; the data is the same shape ({ account }) for every job.
      await (queue as Queues["bills"]).upsertJobScheduler(
        id,
        { every: w.every },
        { name: w.name, data: { account: w.account }, ...(w.priority ? { opts: { priority: w.priority } } : {}) },
      );
      (current ? result.updated : result.added).push(id);
    }
    for (const id of existing.keys()) {
      if (!want.has(id)) {
        await queue.removeJobScheduler(id);
        result.removed.push(id);
      }
    }
  }
  return result;
}
