// Scheduled snapshots of one account's coins (SNAPSHOT_INTERVAL_MS).
import type { Job } from "bullmq";
import { syncAccountSnapshots } from "../../streams/snapshots/index.ts";
import { snapshotsLock, type WorkerContext } from "../context.ts";
import type { JobData } from "../queues.ts";

export async function processSnapshots(ctx: WorkerContext, job: Job<JobData["snapshots"]>): Promise<Record<string, unknown>> {
  const rt = ctx.accounts.get(job.data.account);
  if (!rt) return { skipped: `account ${job.data.account} is no longer configured` };
  if (rt.account.coinIds.length === 0) return { skipped: "account has no coin ids to snapshot" };
  // Two snapshot runs of one account would race on its settings versions: one at a time.
  const lease = await snapshotsLock(ctx, rt.account.name).tryAcquire(ctx.forceStop);
  if (!lease) return { skipped: "another job holds this account's snapshots lock" };
  try {
    const s = await syncAccountSnapshots({
      db: ctx.db,
      client: rt.client,
      logger: ctx.logger,
      accountName: rt.account.name,
      coinIds: rt.account.coinIds,
      retentionDays: ctx.config.snapshotRetentionDays,
      signal: lease.signal,
    });
    ctx.metrics.success(rt.account.name, "snapshots", new Date());
    return { coins: s.coins.map((c) => ({ coinId: c.coinId, outcome: c.outcome })), quarantined: s.quarantined, prunedHistoryRows: s.prunedHistoryRows };
  } finally {
    await lease.release();
  }
}
