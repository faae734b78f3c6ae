// What a job holds while it writes an account: the worker's Redis lease (account-lock.ts: TTL,
// renewal, abort when lost) and the account's PostgreSQL run lock (store/run-lock.ts), which the
// inline commands take too. So a worker job and `sync --once` never write one account at once.
import { requireDatabaseUrl } from "../config/index.ts";
import { AccountBusyError, acquireRunLock, INTERRUPTED_RUNS_MESSAGE, type RunLockGroup } from "../store/run-lock.ts";
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
  let runLock: Awaited<ReturnType<typeof acquireRunLock>>;
  try {
    runLock = await acquireRunLock(requireDatabaseUrl(ctx.config), account, group);
  } catch (err) {
    await lease.release();
    if (err instanceof AccountBusyError) return undefined;
    throw err;
  }
  if (runLock.interruptedRuns > 0)
    ctx.logger.info({ account, group, runs: runLock.interruptedRuns }, INTERRUPTED_RUNS_MESSAGE);
  return {
    signal: AbortSignal.any([lease.signal, runLock.signal]),
    release: async () => {
      await runLock.release();
      await lease.release();
    },
  };
}
