// The daily re-sweep of one account's recent bills (SYNC_RESWEEP_HOURS, low priority): re-reads the
// last hours in full, up to the incremental cursor, for bills the exchange filed later than
// SYNC_LOOKBACK_MS that no continuity break gave away (a bill of amount 0 moves no balance). What
// lies after the cursor is the next incremental run's to read: a bill found there was not missed,
// so the re-sweep stops at the cursor and whatever it stores is a bill the incremental runs
// missed, worth the warning. It moves no bookmark and is recorded in sync_runs as "bills-resweep".
import type { Job } from "bullmq";
import { readCursor } from "../../store/cursors.ts";
import { BILLS_STREAM, syncAccountBills } from "../../streams/bills/index.ts";
import { leaseAccount } from "../account-lease.ts";
import type { WorkerContext } from "../context.ts";
import type { JobData } from "../queues.ts";

export const RESWEEP_STREAM = "bills-resweep";

export async function processResweep(ctx: WorkerContext, job: Job<JobData["bills"]>): Promise<Record<string, unknown>> {
  const rt = ctx.accounts.get(job.data.account);
  if (!rt) return { skipped: `account ${job.data.account} is no longer configured` };
  if (ctx.config.resweepMs === 0) return { skipped: "SYNC_RESWEEP_HOURS is 0" };
  const lease = await leaseAccount(ctx, rt.account.name, "bills");
  if (!lease) return { skipped: "another job or process is writing this account's bills" };
  try {
    const cursorMs = await readCursor(ctx.db, rt.account.name, BILLS_STREAM);
    if (cursorMs === undefined) return { skipped: "no incremental bills run has finished yet" };
    const fromMs = Date.now() - ctx.config.resweepMs;
    const untilMs = cursorMs;
    if (untilMs <= fromMs) return { skipped: "the incremental cursor is older than the re-sweep's hours" };
    const s = await syncAccountBills({
      db: ctx.db,
      client: rt.client,
      logger: ctx.logger,
      accountName: rt.account.name,
      backfillFromMs: fromMs,
      lookbackMs: 0,
      fromMs,
      untilMs,
      bookmark: { none: RESWEEP_STREAM },
      source: rt.account.billsSource,
      exchangeLimits: ctx.config.exchange.limits,
      fence: lease.fence,
      signal: lease.signal,
    });
    ctx.metrics.billsWritten(rt.account.name, s.inserted);
    if (s.inserted > 0 || s.revised > 0) {
      ctx.logger.warn(
        { account: rt.account.name, stream: RESWEEP_STREAM, inserted: s.inserted, revised: s.revised },
        "the re-sweep found bills the incremental syncs had missed (filed later than SYNC_LOOKBACK_MS): stored now",
      );
    }
    return { fromMs, toMs: untilMs, requests: s.requests, inserted: s.inserted, revised: s.revised };
  } finally {
    await lease.release();
  }
}
