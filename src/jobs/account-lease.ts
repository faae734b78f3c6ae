// What a job holds while it writes an account: the worker's Redis lease (account-lock.ts: TTL,
// renewal, abort when lost) and the account's PostgreSQL run lock, which the inline commands take
// too (store/run-lock.ts). So a worker job and `sync --once` never write one account at once. The
// job's run lock is held on the worker's one lock session (store/lock-session.ts), not on a
// connection of its own: running jobs do not each keep a PostgreSQL connection open.
import { INTERRUPTED_RUNS_MESSAGE, type RunLockGroup } from "../store/run-lock.ts";
import type { Lease } from "./account-lock.ts";
import { billsLock, snapshotsLock, type WorkerContext } from "./context.ts";

/** Both locks for `group`, or undefined when another job or process holds either. */
export async function leaseAccount(
  ctx: WorkerContext,
  account: string,
  group: RunLockGroup,
): Promise<Lease | undefined> {
  const lease = await (group === "bills" ? billsLock(ctx, account) : snapshotsLock(ctx, account)).tryAcquire(
    ctx.forceStop,
  );
  if (!lease) return undefined;
  const runLock = await ctx.lockSession.tryAcquire(account, group).catch(async (err: unknown) => {
    await lease.release();
    throw err;
  });
  if (!runLock) {
    await lease.release();
    return undefined;
  }
  if (runLock.interruptedRuns > 0)
    ctx.logger.info({ account, group, runs: runLock.interruptedRuns }, INTERRUPTED_RUNS_MESSAGE);
  return {
    // Also stops when the account is removed, disabled or changed while the job runs (account-watch.ts).
    signal: AbortSignal.any([lease.signal, runLock.signal, ...stoppedOf(ctx, account)]),
    release: async () => {
      await runLock.release();
      await lease.release();
    },
  };
}

function stoppedOf(ctx: WorkerContext, account: string): AbortSignal[] {
  const stopped = ctx.accounts.get(account)?.stopped;
  return stopped ? [stopped] : [];
}
