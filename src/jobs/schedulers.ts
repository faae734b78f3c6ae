// The fleet's one scheduler, BullMQ side: each tick claims the work that is due from PostgreSQL
// (store/sync-schedule.ts, stalest first, one tick at a time across workers) and enqueues it with
// deterministic job ids. A job's deduplication id is its account and kind: while an account's
// previous job of that kind waits or runs, the next slot adds nothing, so a slow account never
// piles up jobs. Redis holds work in flight only; no per-account BullMQ job scheduler is kept.
import type { AccountConfig } from "../config/accounts.ts";
import type { Logger } from "../log/logger.ts";
import type { Db } from "../store/prisma.ts";
import { claimDue, type DueItem, type ScheduleKind, type Wanted } from "../store/sync-schedule.ts";
import type { Queues } from "./queues.ts";
import { repeatEvery, type Repeating } from "./repeat.ts";

export interface SchedulerIntervals {
  billsMs: number;
  snapshotsMs: number;
  /** How often each account's recent bills are re-swept (undefined: never). */
  resweepMs?: number;
  /** How often each account's last day is cross-checked through the other endpoint (undefined: never). */
  crossCheckMs?: number;
}

/** The re-sweep runs once a day per account. */
export const RESWEEP_EVERY_MS = 86_400_000;
/** BullMQ priority of the re-sweep and the cross-check: after every waiting incremental job. */
export const RESWEEP_PRIORITY = 100;
/** Items one tick enqueues at most; the rest wait for the next tick, still stalest first. */
const TICK_LIMIT = 5_000;

/** What every account needs, at which interval. */
export function wantedWork(accounts: AccountConfig[], i: SchedulerIntervals): Wanted[] {
  const out: Wanted[] = [];
  for (const a of accounts) {
    out.push({ account: a.name, kind: "bills", everyMs: i.billsMs });
    if (a.coinIds.length > 0) out.push({ account: a.name, kind: "snapshots", everyMs: i.snapshotsMs });
    if (i.resweepMs !== undefined) out.push({ account: a.name, kind: "resweep", everyMs: i.resweepMs });
    if (i.crossCheckMs !== undefined) out.push({ account: a.name, kind: "cross-check", everyMs: i.crossCheckMs });
  }
  return out;
}

/** BullMQ job ids may not contain ":"; kind first and the slot last keep the id unambiguous. */
export function jobIdOf(d: DueItem): string {
  return `${d.kind}-${d.account}-${d.dueMs}`;
}

export async function enqueueDue(queues: Queues, due: DueItem[]): Promise<void> {
  const job = (d: DueItem) => ({
    name: d.kind,
    data: { account: d.account },
    opts: {
      jobId: jobIdOf(d),
      deduplication: { id: `${d.kind}-${d.account}` },
      ...(d.kind === "resweep" || d.kind === "cross-check" ? { priority: RESWEEP_PRIORITY } : {}),
    },
  });
  const onSnapshots = (k: ScheduleKind) => k === "snapshots";
  const bills = due.filter((d) => !onSnapshots(d.kind)).map(job);
  const snapshots = due.filter((d) => onSnapshots(d.kind)).map(job);
  if (bills.length > 0) await queues.bills.addBulk(bills);
  if (snapshots.length > 0) await queues.snapshots.addBulk(snapshots);
}

/** Job schedulers left in Redis by versions that kept one per account: removed, once. */
export async function removeLegacySchedulers(queues: Queues): Promise<string[]> {
  const removed: string[] = [];
  for (const queue of [queues.bills, queues.snapshots]) {
    for (const s of await queue.getJobSchedulers(0, -1)) {
      await queue.removeJobScheduler(s.key);
      removed.push(s.key);
    }
  }
  return removed;
}

/** Ticks every `tickMs` (the first at once) until stopped; a failed tick is reported and the next one tries again. */
export function startSchedulerTick(o: {
  db: Db;
  queues: Queues;
  wanted: () => Wanted[];
  tickMs: number;
  logger: Logger;
  onError?: (err: unknown) => void;
}): Repeating {
  const tick = async () => {
    try {
      const due = await claimDue(o.db, o.wanted(), TICK_LIMIT, (d) => enqueueDue(o.queues, d));
      if (due && due.length > 0) o.logger.debug({ enqueued: due.length }, "scheduler tick");
    } catch (err) {
      if (o.onError) o.onError(err);
      else o.logger.warn({ err: (err as Error).message }, "scheduler tick failed; the next tick tries again");
    }
  };
  return repeatEvery(o.tickMs, tick, { now: true });
}
