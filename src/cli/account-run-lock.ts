// The inline commands that write an account (sync, snapshot, backfill --inline, verify --repair)
// hold its run leases (store/run-lease.ts) for the whole run: a second one exits at once with
// EXIT.busy, or waits with --wait.
import type { Logger } from "../log/logger.ts";
import { CliExit, EXIT } from "./exit-codes.ts";
import { acquireRunLease, type RunLock } from "../store/lease-keeper.ts";
import { AccountBusyError, INTERRUPTED_RUNS_MESSAGE, type RunFence, type RunLockGroup } from "../store/run-lease.ts";
import { pgPoolConfig } from "../store/pg-config.ts";

export interface AccountRunLockOptions {
  databaseUrl: string;
  account: string;
  groups: RunLockGroup[];
  /** RUN_LEASE_MS. */
  leaseMs: number;
  /** What the command is, shown to another process that finds the account busy ("sync --once"). */
  what: string;
  /** --wait: wait for the other process instead of exiting. */
  wait: boolean;
  logger: Logger;
  /** The command's own stop signal (Ctrl-C also stops the wait). */
  signal?: AbortSignal;
}

export type RunFences = Partial<Record<RunLockGroup, RunFence>>;

/**
 * Runs `body` holding the account's leases; `body` gets a signal that also aborts if a lease is
 * lost, and the fences its writes must carry.
 */
export async function withAccountRunLock<T>(
  o: AccountRunLockOptions,
  body: (signal: AbortSignal, fences: RunFences) => Promise<T>,
): Promise<T> {
  let lock: RunLock;
  try {
    lock = await acquireRunLease(pgPoolConfig(o.databaseUrl), o.account, o.groups, {
      ttlMs: o.leaseMs,
      what: o.what,
      wait: o.wait,
      ...(o.signal ? { signal: o.signal } : {}),
    });
  } catch (err) {
    if (err instanceof AccountBusyError)
      throw new CliExit(EXIT.busy, `${err.message}; exiting without doing anything (pass --wait to wait for it)`);
    throw err;
  }
  try {
    if (lock.tookOverFrom)
      o.logger.info(
        { account: o.account, from: lock.tookOverFrom },
        "took over the run lease of a process that is gone (killed)",
      );
    if (lock.interruptedRuns > 0)
      o.logger.info({ account: o.account, runs: lock.interruptedRuns }, INTERRUPTED_RUNS_MESSAGE);
    return await body(o.signal ? AbortSignal.any([o.signal, lock.signal]) : lock.signal, lock.fences);
  } finally {
    await lock.release();
  }
}
