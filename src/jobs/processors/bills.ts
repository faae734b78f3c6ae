// Scheduled incremental bills sync of one account (BILLS_INTERVAL_MS).
import type { Job } from "bullmq";
import { NO_FACTS, readExchangeFacts } from "../../store/exchange-profiles.ts";
import { syncAccountBills } from "../../streams/bills/index.ts";
import { verifyIncrementally } from "../../verify/incremental.ts";
import { describeCheck, failuresByCheck, isFailing } from "../../verify/report.ts";
import { leaseAccount } from "../account-lease.ts";
import type { WorkerContext } from "../context.ts";
import type { JobData } from "../queues.ts";

export async function processBills(ctx: WorkerContext, job: Job<JobData["bills"]>): Promise<Record<string, unknown>> {
  const rt = ctx.accounts.get(job.data.account);
  if (!rt) return { skipped: `account ${job.data.account} is no longer configured` };
  const lease = await leaseAccount(ctx, rt.account.name, "bills");
  // Another process is syncing this account's bills: this run has nothing to add.
  if (!lease) return { skipped: "another job or process is writing this account's bills" };
  try {
    const s = await syncAccountBills({
      db: ctx.db,
      client: rt.client,
      logger: ctx.logger,
      accountName: rt.account.name,
      backfillFromMs: rt.account.backfillFromMs,
      lookbackMs: ctx.config.lookbackMs,
      exchangeLimits: ctx.config.exchange.limits,
      onLateness: (ms) => ctx.metrics.billLateness(rt.account.name, ms),
      signal: lease.signal,
    });
    ctx.metrics.billsWritten(rt.account.name, s.inserted);
    ctx.metrics.billRevisions(rt.account.name, s.revised);
    ctx.metrics.syncLag(rt.account.name, "bills", Math.max(0, (Date.now() - s.toMs) / 1000));
    ctx.metrics.success(rt.account.name, "bills", new Date());
    // The sync stored what it learnt of the exchange; a missing row means nothing is learnt yet.
    ctx.metrics.exchangeFacts(rt.account.name, (await readExchangeFacts(ctx.db, rt.account.name)) ?? NO_FACTS);
    const verified = await verifyAfterSync(ctx, rt.account.name);
    // The verify counted the quarantine already; count here only when it could not run.
    ctx.metrics.quarantined(rt.account.name, verified.quarantined ?? (await ctx.db.quarantine.count({ where: { accountName: rt.account.name } })));
    return { fromMs: s.fromMs, toMs: s.toMs, requests: s.requests, fetched: s.billsFetched, inserted: s.inserted, revised: s.revised, quarantined: s.quarantined, unverifiedMilliseconds: s.unverifiedMilliseconds, verify: verified };
  } finally {
    await lease.release();
  }
}

/**
 * The cheap incremental verify, while the account's bills lock is still held. What it finds is
 * published (metrics, verify_state for `status`), not thrown: a break in the books is not a reason
 * to stop syncing them. A verify that cannot run is logged and retried after the next sync.
 */
async function verifyAfterSync(ctx: WorkerContext, account: string): Promise<{ ok: boolean; failures?: number; fromMs?: number; quarantined?: number; error?: string }> {
  const logger = ctx.logger.child({ account, stream: "verify" });
  try {
    const v = await verifyIncrementally(ctx.db, { account, coinNames: ctx.config.coinNames, lookbackMs: ctx.config.lookbackMs });
    ctx.metrics.verified(account, failuresByCheck(v.report));
    const failing = v.report.checks.filter(isFailing);
    if (failing.length > 0) logger.warn({ failures: v.report.failures, checks: failing.map(describeCheck) }, "verify found problems in the stored books");
    else logger.debug({ fromMs: v.checkedFromMs, nextFromMs: v.nextFromMs }, "verify passed");
    return { ok: v.report.ok, failures: v.report.failures, fromMs: v.checkedFromMs, quarantined: v.quarantined };
  } catch (err) {
    logger.error({ err }, "verify could not run");
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
