// What a job holds while it writes an account: the account's run lease for the group
// (store/run-lease.ts), the one the inline commands take too, so a worker job and `sync --once`
// never write one account at once. The worker's leases are kept by one keeper per process
// (store/lease-keeper.ts), renewed together in one statement; no connection is held for them.
import { INTERRUPTED_RUNS_MESSAGE, type RunFence, type RunLockGroup, type TakeRider } from "../store/run-lease.ts";
import type { SqlPart } from "../store/sql-part.ts";
import type { WorkerContext } from "./context.ts";

export interface Lease {
  /** Aborted when the lease is lost, the worker is forced to stop, or the account changes: stop working. */
  signal: AbortSignal;
  /** The run's fence: every write of the books checks it. */
  fence: RunFence;
  /**
   * Frees the lease; `carry`, a write of the job's end, goes in the same statement (true), or is
   * left to the caller (false: the lease was lost, or the release failed).
   */
  release(carry?: SqlPart): Promise<boolean>;
  /** The columns the take's rider added to its answer (leaseAccount's `rider`). */
  carried?: Record<string, unknown>;
}

/**
 * The account's lease for `group`, or undefined when another job or process holds it. `rider`: the
 * job's first reads and writes, in the take's statement (run-lease.ts, TakeRider).
 */
export async function leaseAccount(
  ctx: WorkerContext,
  account: string,
  group: RunLockGroup,
  rider?: TakeRider,
): Promise<Lease | undefined> {
  const runLock = await ctx.leases.tryAcquire(account, [group], rider);
  if (!runLock) return undefined;
  if (runLock.tookOverFrom)
    ctx.logger.info(
      { account, group, from: runLock.tookOverFrom },
      "took over the run lease of a process that is gone (killed)",
    );
  if (runLock.interruptedRuns > 0)
    ctx.logger.info({ account, group, runs: runLock.interruptedRuns }, INTERRUPTED_RUNS_MESSAGE);
  return {
    // Also stops when the account is removed, disabled or changed while the job runs (account-watch.ts).
    signal: AbortSignal.any([runLock.signal, ctx.forceStop, ...stoppedOf(ctx, account)]),
    fence: runLock.fences[group]!,
    release: (carry) => runLock.release(carry),
    ...(runLock.carried ? { carried: runLock.carried } : {}),
  };
}

function stoppedOf(ctx: WorkerContext, account: string): AbortSignal[] {
  const stopped = ctx.accounts.get(account)?.stopped;
  return stopped ? [stopped] : [];
}
