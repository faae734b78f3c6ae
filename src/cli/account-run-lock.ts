// The inline commands that write an account (sync, snapshot, backfill --inline, verify --repair)
// hold its run lock (store/run-lock.ts) for the whole run: a second one exits at once with
// EXIT.busy, or waits with --wait.
import type { Logger } from "../log/logger.ts";
import { CliExit, EXIT } from "./exit-codes.ts";
import {
  AccountBusyError,
  acquireRunLocks,
  INTERRUPTED_RUNS_MESSAGE,
  type RunLock,
  type RunLockGroup,
} from "../store/run-lock.ts";

export interface AccountRunLockOptions {
  databaseUrl: string;
  account: string;
  groups: RunLockGroup[];
  /** --wait: wait for the other process instead of exiting. */
  wait: boolean;
  logger: Logger;
  /** The command's own stop signal (Ctrl-C also stops the wait). */
  signal?: AbortSignal;
}

/** Runs `body` holding the account's lock; `body` gets a signal that also aborts if the lock is lost. */
export async function withAccountRunLock<T>(
  o: AccountRunLockOptions,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  let lock: RunLock;
  try {
    lock = await acquireRunLocks(o.databaseUrl, o.account, o.groups, {
      wait: o.wait,
      ...(o.signal ? { signal: o.signal } : {}),
    });
  } catch (err) {
    if (err instanceof AccountBusyError)
      throw new CliExit(EXIT.busy, `${err.message}; exiting without doing anything (pass --wait to wait for it)`);
    throw err;
  }
  try {
    if (lock.interruptedRuns > 0)
      o.logger.info({ account: o.account, runs: lock.interruptedRuns }, INTERRUPTED_RUNS_MESSAGE);
    return await body(o.signal ? AbortSignal.any([o.signal, lock.signal]) : lock.signal);
  } finally {
    await lock.release();
  }
}
