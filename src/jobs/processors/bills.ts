// Scheduled incremental bills sync of one account (BILLS_INTERVAL_MS).
import type { Job } from "bullmq";
import { syncAccountBills } from "../../streams/bills/index.ts";
import { billsLock, type WorkerContext } from "../context.ts";
import type { JobData } from "../queues.ts";

export async function processBills(ctx: WorkerContext, job: Job<JobData["bills"]>): Promise<Record<string, unknown>> {
  const rt = ctx.accounts.get(job.data.account);
  if (!rt) return { skipped: `account ${job.data.account} is no longer configured` };
  const lease = await billsLock(ctx, rt.account.name).tryAcquire(ctx.forceStop);
  // Another process is syncing this account's bills: this run has nothing to add.
  if (!lease) return { skipped: "another job holds this account's bills lock" };
  try {
    const s = await syncAccountBills({
      db: ctx.db,
      client: rt.client,
      logger: ctx.logger,
      accountName: rt.account.name,
      backfillFromMs: rt.account.backfillFromMs,
      lookbackMs: ctx.config.lookbackMs,
      signal: lease.signal,
    });
    ctx.metrics.billsWritten(rt.account.name, s.inserted);
    ctx.metrics.billRevisions(rt.account.name, s.revised);
    ctx.metrics.syncLag(rt.account.name, "bills", Math.max(0, (Date.now() - s.toMs) / 1000));
    ctx.metrics.success(rt.account.name, "bills", new Date());
    ctx.metrics.quarantined(rt.account.name, await ctx.db.quarantine.count({ where: { accountName: rt.account.name } }));
    return { fromMs: s.fromMs, toMs: s.toMs, requests: s.requests, fetched: s.billsFetched, inserted: s.inserted, revised: s.revised, quarantined: s.quarantined, unverifiedMilliseconds: s.unverifiedMilliseconds };
  } finally {
    await lease.release();
  }
}
