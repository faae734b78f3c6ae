// Boot-time reconciliation of job schedulers with the configuration: every configured account
// has a bills scheduler (and a snapshots one when it has coin ids) at the configured interval;
// schedulers of accounts no longer configured are removed. upsertJobScheduler is idempotent, so
// several workers booting at once converge on the same set.
import type { AccountConfig } from "../config/accounts.ts";
import type { Queues } from "./queues.ts";

export interface SchedulerIntervals {
  billsMs: number;
  snapshotsMs: number;
}

export interface Reconciliation {
  added: string[];
  updated: string[];
  removed: string[];
}

const billsId = (account: string) => `bills:${account}`;
const snapshotsId = (account: string) => `snapshots:${account}`;

export async function reconcileSchedulers(queues: Queues, accounts: AccountConfig[], intervals: SchedulerIntervals): Promise<Reconciliation> {
  const result: Reconciliation = { added: [], updated: [], removed: [] };
  const plan = [
    { queue: queues.bills, want: new Map(accounts.map((a) => [billsId(a.name), a.name])), every: intervals.billsMs, name: "bills" as const },
    { queue: queues.snapshots, want: new Map(accounts.filter((a) => a.coinIds.length > 0).map((a) => [snapshotsId(a.name), a.name])), every: intervals.snapshotsMs, name: "snapshots" as const },
  ];
  for (const { queue, want, every, name } of plan) {
    const existing = new Map((await queue.getJobSchedulers(0, -1)).map((s) => [s.key, s]));
    for (const [id, account] of want) {
      const current = existing.get(id);
      if (current && Number(current.every) === every) continue;
      // Typed per queue; the data is the same shape ({ account }) for both.
      await (queue as Queues["bills"]).upsertJobScheduler(id, { every }, { name, data: { account } });
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
