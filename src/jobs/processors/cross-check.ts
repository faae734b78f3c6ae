// The scheduled cross-check of one account (CROSS_CHECK_INTERVAL_MS, low priority): the last day
// up to the bills bookmark, read through the other endpoint than the account's BILLS_SOURCE and
// compared with the store (src/verify/cross-check.ts). Read-only, so it takes no account lease;
// a difference is logged as an error and recorded (sync_runs, `status`), not thrown: the books
// are not changed by it, and retrying the job would find the same.
import type { Job } from "bullmq";
import { crossCheckRange } from "../../verify/cross-check-range.ts";
import { crossCheck, describeDifferences } from "../../verify/cross-check.ts";
import type { WorkerContext } from "../context.ts";
import type { JobData } from "../queues.ts";

export async function processCrossCheck(
  ctx: WorkerContext,
  job: Job<JobData["bills"]>,
): Promise<Record<string, unknown>> {
  const rt = ctx.accounts.get(job.data.account);
  if (!rt) return { skipped: `account ${job.data.account} is no longer configured` };
  const range = await crossCheckRange(ctx.db, rt.account.name);
  if (range === null) return { skipped: "no bills stored yet" };
  const source = rt.account.billsSource === "v3" ? "v2" : "v3";
  const r = await crossCheck({
    db: ctx.db,
    client: rt.client,
    logger: ctx.logger,
    account: rt.account.name,
    source,
    ...range,
    exchangeLimits: ctx.config.exchange.limits,
    signal: ctx.forceStop,
  });
  if (!r.ok) {
    ctx.logger.error(
      {
        account: rt.account.name,
        source,
        fromMs: r.fromMs,
        toMs: r.toMs,
        missingInStore: r.missingInStore.slice(0, 20),
        missingOnExchange: r.missingOnExchange.slice(0, 20),
        different: r.different.slice(0, 20),
      },
      `cross-check found differences: ${describeDifferences(r)}`,
    );
  }
  return {
    ok: r.ok,
    source,
    fromMs: r.fromMs,
    toMs: r.toMs,
    requests: r.requests,
    exchangeBills: r.exchangeBills,
    storedBills: r.storedBills,
  };
}
