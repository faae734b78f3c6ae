// One window of a backfill (`ledger-sync backfill`): [fromMs, toMs] of one account, with its own
// bookmark so a crash resumes inside the window. Holds the account's bills lock like the
// incremental job; when that is busy, the window waits (delayed) instead of giving up.
//
// Windows of one account run in time order. A window whose predecessor is unfinished steps aside
// for a while (most of a long backfill's windows are waiting), and a finished window promotes its
// successor at once: an account's backfill moves window after window instead of one window per
// pass over the whole queue. Should the promotion be lost (a crash right after the commit), the
// successor still runs when its wait ends.
import { DelayedError, Job, type Queue } from "bullmq";
import { readCursor } from "../../store/cursors.ts";
import { syncAccountBills } from "../../streams/bills/index.ts";
import { backfillCursorStream, backfillJobId } from "../backfill-plan.ts";
import { leaseAccount } from "../account-lease.ts";
import type { WorkerContext } from "../context.ts";
import { inCatchUp } from "../../exchange/catch-up-share.ts";
import type { JobData } from "../queues.ts";

/** How long a window whose predecessor is unfinished steps aside (its predecessor promotes it sooner). */
const PREDECESSOR_WAIT_MS = 10_000;
/** How long a window waits for the account's bills lock (held by a short incremental job, usually). */
const LOCK_WAIT_MS = 500;

export async function processBackfillWindow(
  ctx: WorkerContext,
  job: Job<JobData["backfill"]>,
  token?: string,
  queue?: Queue,
): Promise<Record<string, unknown>> {
  const { account, fromMs, toMs, previous, next } = job.data;
  const rt = ctx.accounts.get(account);
  if (!rt) throw new Error(`backfill for account ${account}, which is not configured in this worker`);
  const later = async (waitMs: number): Promise<never> => {
    await job.moveToDelayed(Date.now() + waitMs + Math.floor(Math.random() * waitMs), token);
    throw new DelayedError();
  };
  // Time order: the previous window must be complete (its bookmark at its end) first.
  if (
    previous &&
    ((await readCursor(ctx.db, account, backfillCursorStream(previous.fromMs, previous.toMs))) ?? -Infinity) <
      previous.toMs
  )
    return later(PREDECESSOR_WAIT_MS);
  const lease = await leaseAccount(ctx, account, "bills");
  if (!lease) return later(LOCK_WAIT_MS);
  try {
    // History by definition: within the egress's catch-up share of the IP budget.
    const s = await inCatchUp(() =>
      syncAccountBills({
        db: ctx.db,
        client: rt.client,
        logger: ctx.logger.child({ backfill: job.data.backfillId }),
        accountName: account,
        backfillFromMs: fromMs,
        lookbackMs: 0,
        fromMs,
        untilMs: toMs,
        bookmark: { window: backfillCursorStream(fromMs, toMs) },
        source: rt.account.billsSource,
        exchangeLimits: ctx.config.exchange.limits,
        fence: lease.fence,
        signal: lease.signal,
      }),
    );
    ctx.metrics.billsWritten(account, s.inserted);
    const successor =
      next && queue ? await promoteSuccessor(ctx, queue, backfillJobId(account, next.fromMs, next.toMs)) : "none";
    return {
      fetched: s.billsFetched,
      inserted: s.inserted,
      requests: s.requests,
      unverifiedMilliseconds: s.unverifiedMilliseconds,
      successor,
    };
  } finally {
    await lease.release();
  }
}

/** Best effort: the successor runs when its wait ends anyway. */
async function promoteSuccessor(
  ctx: WorkerContext,
  queue: Queue,
  jobId: string,
): Promise<"promoted" | "not waiting" | "not found" | "failed"> {
  try {
    const successor = await Job.fromId(queue, jobId);
    if (!successor) return "not found";
    if (!(await successor.isDelayed())) return "not waiting";
    await successor.promote();
    return "promoted";
  } catch (err) {
    ctx.logger.debug(
      { jobId, err: err instanceof Error ? err.message : String(err) },
      "could not promote the next backfill window; it runs when its wait ends",
    );
    return "failed";
  }
}
