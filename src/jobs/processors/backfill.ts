// One window of a backfill (`ledger-sync backfill`): [fromMs, toMs] of one account, with its own
// bookmark so a crash resumes inside the window. Holds the account's bills lock like the
// incremental job; when that is busy, the window waits (delayed) instead of giving up.
import { DelayedError, type Job } from "bullmq";
import { readCursor } from "../../store/cursors.ts";
import { syncAccountBills } from "../../streams/bills/index.ts";
import { billsLock, type WorkerContext } from "../context.ts";
import type { JobData } from "../queues.ts";

export const backfillCursorStream = (fromMs: number, toMs: number) => `bills-backfill:${fromMs}-${toMs}`;

export async function processBackfillWindow(ctx: WorkerContext, job: Job<JobData["backfill"]>, token?: string): Promise<Record<string, unknown>> {
  const { account, fromMs, toMs, previous } = job.data;
  const rt = ctx.accounts.get(account);
  if (!rt) throw new Error(`backfill for account ${account}, which is not configured in this worker`);
  const later = async (): Promise<never> => {
    await job.moveToDelayed(Date.now() + 500 + Math.floor(Math.random() * 500), token);
    throw new DelayedError();
  };
  // Time order: the previous window must be complete (its bookmark at its end) first.
  if (previous && ((await readCursor(ctx.db, account, backfillCursorStream(previous.fromMs, previous.toMs))) ?? -Infinity) < previous.toMs) return later();
  const lease = await billsLock(ctx, account).tryAcquire(ctx.forceStop);
  if (!lease) return later();
  try {
    const s = await syncAccountBills({
      db: ctx.db,
      client: rt.client,
      logger: ctx.logger.child({ backfill: job.data.backfillId }),
      accountName: account,
      backfillFromMs: fromMs,
      lookbackMs: 0,
      fromMs,
      untilMs: toMs,
      cursorStream: backfillCursorStream(fromMs, toMs),
      signal: lease.signal,
    });
    ctx.metrics.billsWritten(account, s.inserted);
    return { fetched: s.billsFetched, inserted: s.inserted, requests: s.requests, unverifiedMilliseconds: s.unverifiedMilliseconds };
  } finally {
    await lease.release();
  }
}
