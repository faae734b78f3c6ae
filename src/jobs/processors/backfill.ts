// One window of a backfill (`ledger-sync backfill`): [fromMs, toMs] of one account, with its own
// bookmark so a crash resumes inside the window. Holds the account's bills lock like the
// incremental job; when that is busy, the window waits (delayed) instead of giving up.
import { DelayedError, type Job } from "bullmq";
import { syncAccountBills } from "../../streams/bills/index.ts";
import { billsLock, type WorkerContext } from "../context.ts";
import type { JobData } from "../queues.ts";

export const backfillCursorStream = (fromMs: number, toMs: number) => `bills-backfill:${fromMs}-${toMs}`;

export async function processBackfillWindow(ctx: WorkerContext, job: Job<JobData["backfill"]>, token?: string): Promise<Record<string, unknown>> {
  const { account, fromMs, toMs } = job.data;
  const rt = ctx.accounts.get(account);
  if (!rt) throw new Error(`backfill for account ${account}, which is not configured in this worker`);
  const lease = await billsLock(ctx, account).tryAcquire();
  if (!lease) {
    await job.moveToDelayed(Date.now() + 1000 + Math.floor(Math.random() * 1000), token);
    throw new DelayedError();
  }
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
      signal: AbortSignal.any([lease.signal, ctx.forceStop]),
    });
    ctx.metrics.billsWritten(account, s.inserted);
    return { fetched: s.billsFetched, inserted: s.inserted, requests: s.requests, unverifiedMilliseconds: s.unverifiedMilliseconds };
  } finally {
    await lease.release();
  }
}
