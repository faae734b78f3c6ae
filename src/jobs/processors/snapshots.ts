// Scheduled snapshots of one account's coins (SNAPSHOT_INTERVAL_MS).
import type { Job } from "bullmq";
import { syncAccountSnapshots } from "../../streams/snapshots/index.ts";
import { leaseAccount } from "../account-lease.ts";
import type { WorkerContext } from "../context.ts";
import type { JobData } from "../queues.ts";

export async function processSnapshots(
  ctx: WorkerContext,
  job: Job<JobData["snapshots"]>,
): Promise<Record<string, unknown>> {
  const rt = ctx.accounts.get(job.data.account);
  if (!rt) return { skipped: `account ${job.data.account} is no longer configured` };
  if (rt.account.coinIds.length === 0) return { skipped: "account has no coin ids to snapshot" };
  // Two snapshot runs of one account would race on its settings versions: one at a time.
  const lease = await leaseAccount(ctx, rt.account.name, "snapshots");
  if (!lease) return { skipped: "another job or process is writing this account's snapshots" };
  try {
    const s = await syncAccountSnapshots({
      db: ctx.db,
      client: rt.client,
      logger: ctx.logger,
      accountName: rt.account.name,
      coinIds: rt.account.coinIds,
      coinNames: ctx.config.coinNames,
      retentionDays: ctx.config.snapshotRetentionDays,
      fence: lease.fence,
      signal: lease.signal,
    });
    ctx.metrics.success(rt.account.name, "snapshots", new Date());
    return {
      coins: s.coins.map((c) => ({ coinId: c.coinId, outcome: c.outcome })),
      quarantined: s.quarantined,
      prunedHistoryRows: s.prunedHistoryRows,
    };
  } finally {
    await lease.release();
  }
}
