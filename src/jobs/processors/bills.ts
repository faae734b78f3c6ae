// Scheduled incremental bills sync of one account (BILLS_INTERVAL_MS).
import type { Job } from "bullmq";
import { changedClosedPeriods } from "../../periods/closed-period-check.ts";
import { inCatchUp } from "../../exchange/catch-up-share.ts";
import { isBehind } from "../../streams/bills/catching-up.ts";
import { syncAccountBills } from "../../streams/bills/index.ts";
import type { CoinContinuity } from "../../verify/balance-continuity.ts";
import {
  beginIncrementalVerify,
  saveIncrementalVerify,
  verifyIncrementallyUnsaved,
  type UnsavedIncrementalVerify,
} from "../../verify/incremental.ts";
import { settleWallet } from "../../verify/wallet.ts";
import { alone, type SqlPart } from "../../store/sql-part.ts";
import { finishRun, type OpenedRun } from "../../store/sync-runs.ts";
import { billsJobRider, readBillsJobStart, type BillsJobStart } from "../../streams/bills/job-start.ts";
import { describeCheck, failuresByCheck, isFailing } from "../../verify/report.ts";
import { leaseAccount, type Lease } from "../account-lease.ts";
import type { AccountRuntime, WorkerContext } from "../context.ts";
import { healBreaks, settleHealing } from "../self-heal.ts";
import type { JobData } from "../queues.ts";

export async function processBills(ctx: WorkerContext, job: Job<JobData["bills"]>): Promise<Record<string, unknown>> {
  const rt = ctx.accounts.get(job.data.account);
  if (!rt) return { skipped: `account ${job.data.account} is no longer configured` };
  const untilMs = Date.now();
  // The take reads the cursor and the exchange profile and opens the run, in its own statement
  // (streams/bills/job-start.ts): under the lease nobody else moves them.
  const lease = await leaseAccount(
    ctx,
    rt.account.name,
    "bills",
    billsJobRider({
      account: rt.account.name,
      backfillFromMs: rt.account.backfillFromMs,
      lookbackMs: ctx.config.lookbackMs,
      untilMs,
    }),
  );
  // Another process is syncing this account's bills: this run has nothing to add.
  if (!lease) return { skipped: "another job or process is writing this account's bills" };
  // The verify's state, saved by the lease's release in the same statement (one round trip less a job).
  let verifyState: UnsavedIncrementalVerify | undefined;
  let start: BillsJobStart | undefined;
  let failure: unknown;
  try {
    const { cursorMs, facts, run } = (start = readBillsJobStart(rt.account.name, lease.carried));
    // A run that ends well is finished by the verify's start, the job's next statement.
    run.finishLater = true;
    // The catch-up test and the run's plan share the cursor as read.
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
        profileAsRead: facts,
        openedRun: run,
        untilMs,
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
    const { result: verified, unsaved, finished } = await verifyAndHeal(ctx, rt, lease, run.finish);
    verifyState = unsaved;
    // The verify could not start: the run is finished on its own (a failure to record it fails the job).
    if (run.finish && !finished) await finishAlone(ctx, run);
    run.finish = undefined;
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
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    if (start && !start.run.claimed) await finishUnclaimed(ctx, start.run, lease, failure);
    // Ended well, then the job threw before the verify's start finished it.
    if (start?.run.finish)
      await finishAlone(ctx, start.run).catch((err: unknown) =>
        ctx.logger.error({ err, account: start!.run.accountName }, "could not record the run's end"),
      );
    await releaseWith(ctx, rt.account.name, lease, verifyState);
  }
}

/** Sends the finish recordRun left to the job (OpenedRun.finish) on its own. */
async function finishAlone(ctx: WorkerContext, run: OpenedRun): Promise<void> {
  const { text, values } = alone(run.finish!);
  run.finish = undefined;
  await ctx.db.$executeRawUnsafe(text, ...values);
}

/** The run opened with the lease when the job ended before the stream took it: finished here. */
async function finishUnclaimed(ctx: WorkerContext, run: OpenedRun, lease: Lease, failure: unknown) {
  await finishRun(ctx.db, run.accountName, run.id, {
    outcome: lease.signal.aborted ? "interrupted" : "failed",
    error:
      failure === undefined
        ? "the job ended before its run began"
        : failure instanceof Error
          ? failure.message
          : String(failure),
  }).catch((err: unknown) =>
    ctx.logger.error({ err, account: run.accountName, run: String(run.id) }, "could not record the run's end"),
  );
}

/**
 * Frees the lease carrying the verify's state; when the release could not carry it (the lease was
 * lost, or the release failed), the state is saved on its own, as it was before the release.
 */
async function releaseWith(ctx: WorkerContext, account: string, lease: Lease, v: UnsavedIncrementalVerify | undefined) {
  if ((await lease.release(v?.save)) || !v) return;
  await saveAlone(ctx, account, v);
}

/** Saves the verify's state on its own; false (logged) when it could not. */
async function saveAlone(ctx: WorkerContext, account: string, v: UnsavedIncrementalVerify): Promise<boolean> {
  return saveIncrementalVerify(ctx.db, v).then(
    () => true,
    (err: unknown) => {
      ctx.logger.child({ account, stream: "verify" }).error({ err }, "the verify's state could not be saved");
      return false;
    },
  );
}

/**
 * The verify after the sync; where it finds continuity breaks, the windows around them are
 * re-fetched (self-heal.ts) and verified again, all under the account's lease.
 */
async function verifyAndHeal(
  ctx: WorkerContext,
  rt: AccountRuntime,
  lease: Lease,
  carry: SqlPart | undefined,
): Promise<{ result: VerifyResult; unsaved?: UnsavedIncrementalVerify; finished: boolean }> {
  const account = rt.account.name;
  let v = await verifyAfterSync(ctx, account, carry);
  const finished = v.carried;
  const breaks = (c: CoinContinuity[]) => c.reduce((n, x) => n + x.breaks.length, 0);
  const found = v.continuity;
  // The heal's writes and the verify after it start from the state this verify leaves: saved first
  // (not saved: no heal this time, and the release tries to save it again).
  if (found && v.unsaved && breaks(found) > 0 && (await saveAlone(ctx, account, v.unsaved))) {
    v = { ...v, unsaved: undefined };
    const attempt = await healBreaks(ctx, rt, found, lease.signal, lease.fence);
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
  return { result: v.result, unsaved: v.unsaved, finished };
}

interface VerifyResult {
  ok: boolean;
  failures?: number;
  fromMs?: number;
  quarantined?: number;
  error?: string;
}

/**
 * The cheap incremental verify, while the account's bills lock is still held. What it finds is
 * published (metrics, verify_state for `status`), not thrown: a break in the books is not a reason
 * to stop syncing them. A verify that cannot run is logged and retried after the next sync. Its
 * state is returned unsaved (`unsaved`): the caller saves it, with the lease's release.
 */
async function verifyAfterSync(
  ctx: WorkerContext,
  account: string,
  carry?: SqlPart,
): Promise<{
  result: VerifyResult;
  continuity?: CoinContinuity[];
  unsaved?: UnsavedIncrementalVerify;
  /** `carry` was written with the verify's start. */
  carried: boolean;
}> {
  const logger = ctx.logger.child({ account, stream: "verify" });
  let carried = false;
  try {
    const begun = await beginIncrementalVerify(ctx.db, account, carry);
    carried = carry !== undefined;
    // Reported balances the bills now cover are compared and filed first; the verify shows the newest.
    // Through the verify's reads (begun.db): a wallet that settles anything drops what the start read ahead.
    const wallet = await settleWallet(begun.db, {
      account,
      coinNames: ctx.config.coinNames,
      billsCursorMs: begun.facts.cursor?.cursorMs,
      lookbackMs: ctx.config.lookbackMs,
      pending: begun.pending,
    });
    for (const w of wallet.filter((r) => r.status !== "tied"))
      logger.warn({ coin: w.reading.coin, source: w.reading.source, summary: w.summary }, "wallet check: not tied");
    const v = await verifyIncrementallyUnsaved(ctx.db, {
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
      unsaved: v,
      carried,
    };
  } catch (err) {
    logger.error({ err }, "verify could not run");
    return { result: { ok: false, error: err instanceof Error ? err.message : String(err) }, carried };
  }
}
