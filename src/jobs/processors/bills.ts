// Scheduled incremental bills sync of one account (BILLS_INTERVAL_MS).
import type { Job } from "bullmq";
import { changedClosedPeriods } from "../../periods/closed-period-check.ts";
import { inCatchUp } from "../../exchange/catch-up-share.ts";
import { isBehind } from "../../streams/bills/catching-up.ts";
import { syncAccountBills } from "../../streams/bills/index.ts";
import type { CoinContinuity } from "../../verify/balance-continuity.ts";
import { beginIncrementalVerify, verifyIncrementally } from "../../verify/incremental.ts";
import { settleWallet } from "../../verify/wallet.ts";
import { readCursor } from "../../store/cursors.ts";
import { BILLS_STREAM } from "../../streams/bills-core/stream-name.ts";
import { describeCheck, failuresByCheck, isFailing } from "../../verify/report.ts";
import { leaseAccount, type Lease } from "../account-lease.ts";
import type { AccountRuntime, WorkerContext } from "../context.ts";
import { healBreaks, settleHealing } from "../self-heal.ts";
import type { JobData } from "../queues.ts";

export async function processBills(ctx: WorkerContext, job: Job<JobData["bills"]>): Promise<Record<string, unknown>> {
  const rt = ctx.accounts.get(job.data.account);
  if (!rt) return { skipped: `account ${job.data.account} is no longer configured` };
  const lease = await leaseAccount(ctx, rt.account.name, "bills");
  // Another process is syncing this account's bills: this run has nothing to add.
  if (!lease) return { skipped: "another job or process is writing this account's bills" };
  try {
    // Read once under the lease (nobody else moves it): the catch-up test and the run's plan share it.
    const cursorMs = (await readCursor(ctx.db, rt.account.name, BILLS_STREAM)) ?? null;
    const behind = isBehind({
      cursorMs,
      backfillFromMs: rt.account.backfillFromMs,
      billsIntervalMs: ctx.config.worker.billsIntervalMs,
    });
    const sync = () =>
      syncAccountBills({
        db: ctx.db,
        client: rt.client,
        logger: ctx.logger,
        accountName: rt.account.name,
        backfillFromMs: rt.account.backfillFromMs,
        cursorAsRead: cursorMs,
        lookbackMs: ctx.config.lookbackMs,
        exchangeLimits: ctx.config.exchange.limits,
        onLateness: (ms) => ctx.metrics.billLateness(rt.account.name, ms),
        source: rt.account.billsSource,
        fence: lease.fence,
        signal: lease.signal,
      });
    // Far behind (a new account's history, a long outage): within the egress's catch-up share.
    const s = behind ? await inCatchUp(sync) : await sync();
    ctx.metrics.billsWritten(rt.account.name, s.inserted);
    ctx.metrics.billRevisions(rt.account.name, s.revised);
    ctx.metrics.syncLag(rt.account.name, "bills", Math.max(0, (Date.now() - s.toMs) / 1000));
    ctx.metrics.success(rt.account.name, "bills", new Date());
    // What the sync learnt of the exchange (and stored) is in its summary.
    ctx.metrics.exchangeFacts(rt.account.name, s.exchange);
    const verified = await verifyAndHeal(ctx, rt, lease);
    // The verify counted the quarantine already; count here only when it could not run.
    ctx.metrics.quarantined(
      rt.account.name,
      verified.quarantined ?? (await ctx.db.quarantine.count({ where: { accountName: rt.account.name } })),
    );
    return {
      fromMs: s.fromMs,
      toMs: s.toMs,
      requests: s.requests,
      fetched: s.billsFetched,
      inserted: s.inserted,
      revised: s.revised,
      quarantined: s.quarantined,
      unverifiedMilliseconds: s.unverifiedMilliseconds,
      verify: verified,
    };
  } finally {
    await lease.release();
  }
}

/**
 * The verify after the sync; where it finds continuity breaks, the windows around them are
 * re-fetched (self-heal.ts) and verified again, all under the account's lease.
 */
async function verifyAndHeal(ctx: WorkerContext, rt: AccountRuntime, lease: Lease) {
  const account = rt.account.name;
  let v = await verifyAfterSync(ctx, account);
  const breaks = (c: CoinContinuity[]) => c.reduce((n, x) => n + x.breaks.length, 0);
  if (v.continuity && breaks(v.continuity) > 0) {
    const attempt = await healBreaks(ctx, rt, v.continuity, lease.signal, lease.fence);
    if (attempt.windows.length > 0) {
      v = await verifyAfterSync(ctx, account);
      const settled = await settleHealing(ctx, account, attempt, v.continuity ?? []);
      const logger = ctx.logger.child({ account, stream: "heal" });
      for (const h of settled.healed)
        logger.info(
          { window: h.window, billIds: h.billIds, requests: attempt.requests },
          "a continuity break healed: the re-fetch brought the bill(s) that fill it",
        );
      if (settled.open.length > 0)
        logger.warn(
          { windows: settled.open },
          "continuity breaks still open after re-fetching: the exchange itself shows the gap; " +
            "tried again after a backoff",
        );
      ctx.metrics.breaksHealed(account, settled.healed.length);
    }
  }
  if (v.continuity) ctx.metrics.breaksOpen(account, breaks(v.continuity));
  return v.result;
}

/**
 * The cheap incremental verify, while the account's bills lock is still held. What it finds is
 * published (metrics, verify_state for `status`), not thrown: a break in the books is not a reason
 * to stop syncing them. A verify that cannot run is logged and retried after the next sync.
 */
async function verifyAfterSync(
  ctx: WorkerContext,
  account: string,
): Promise<{
  result: { ok: boolean; failures?: number; fromMs?: number; quarantined?: number; error?: string };
  continuity?: CoinContinuity[];
}> {
  const logger = ctx.logger.child({ account, stream: "verify" });
  try {
    const begun = await beginIncrementalVerify(ctx.db, account);
    // Reported balances the bills now cover are compared and filed first; the verify shows the newest.
    const wallet = await settleWallet(ctx.db, {
      account,
      coinNames: ctx.config.coinNames,
      billsCursorMs: begun.facts.cursor?.cursorMs,
      lookbackMs: ctx.config.lookbackMs,
      pending: begun.pending,
    });
    for (const w of wallet.filter((r) => r.status !== "tied"))
      logger.warn({ coin: w.reading.coin, source: w.reading.source, summary: w.summary }, "wallet check: not tied");
    const v = await verifyIncrementally(ctx.db, {
      account,
      begun,
      coinNames: ctx.config.coinNames,
      lookbackMs: ctx.config.lookbackMs,
    });
    ctx.metrics.verified(account, failuresByCheck(v.report));
    ctx.metrics.closedPeriodsChanged(account, changedClosedPeriods(v.report));
    const failing = v.report.checks.filter(isFailing);
    if (failing.length > 0)
      logger.warn(
        { failures: v.report.failures, checks: failing.map(describeCheck) },
        "verify found problems in the stored books",
      );
    else logger.debug({ fromMs: v.checkedFromMs, nextFromMs: v.nextFromMs }, "verify passed");
    return {
      result: { ok: v.report.ok, failures: v.report.failures, fromMs: v.checkedFromMs, quarantined: v.quarantined },
      continuity: v.continuity,
    };
  } catch (err) {
    logger.error({ err }, "verify could not run");
    return { result: { ok: false, error: err instanceof Error ? err.message : String(err) } };
  }
}
