// The worker's signal handling (SIGTERM/SIGINT, and the exit of an npm parent), from start-up to
// the end of its ordered shutdown.
import type { Logger } from "../log/logger.ts";
import { launchedThroughNpm, watchParent } from "./parent-watch.ts";
import type { RunningWorker } from "./worker.ts";

/**
 * SIGTERM/SIGINT handling for the worker's whole life. Before boot ends a signal is remembered
 * (and boot is given SHUTDOWN_TIMEOUT_MS to end, else the process exits 1: boot can wait forever on
 * an unreachable Redis, and no job has started before boot ends, so nothing is cut short); once
 * booted, the remembered or a later signal runs the ordered stop, and a second signal during that
 * stop exits at once (the impatient operator's Ctrl-C twice; committed work is kept, the rest is
 * redone from the cursor). Handlers are removed when the worker is done.
 *
 * Started through npm, the parent's exit counts as SIGTERM (parent-watch.ts says why). It is not a
 * signal for the "second signal" rule: when a group-wide SIGTERM also reaches this process, either
 * may be noticed first, and the pair must make one ordered shutdown, not an exit at once.
 */
export function workerSignals(
  logger: Logger,
  timeoutMs: number,
): { booted(worker: RunningWorker): void; release(): void } {
  let stop: ((reason: string) => Promise<void>) | undefined;
  let pending: string | undefined;
  let stopping = false;
  let signalled = false;
  let bootTimer: NodeJS.Timeout | undefined;
  const shutDown = (reason: string) => {
    unwatch();
    if (stopping) return;
    if (stop) {
      stopping = true;
      return void stop(reason);
    }
    if (pending) return;
    pending = reason;
    logger.info({ reason, timeoutMs }, "signal during start-up: shutting down once started");
    bootTimer = setTimeout(() => {
      logger.error(
        { reason, timeoutMs },
        "start-up did not finish within SHUTDOWN_TIMEOUT_MS of the signal: exiting without an ordered shutdown",
      );
      process.exit(1);
    }, timeoutMs);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping && signalled) {
      logger.warn({ reason: signal }, "second signal during shutdown: exiting now (committed progress is kept)");
      process.exit(1);
    }
    signalled = true;
    shutDown(signal);
  };
  const unwatch = launchedThroughNpm(process.env)
    ? watchParent((was, now) => {
        logger.warn(
          { parentPid: was, newParentPid: now },
          "the process that started this worker through npm is gone (npm does not pass SIGTERM on to it): " +
            "shutting down as on SIGTERM",
        );
        shutDown("parent gone");
      })
    : () => undefined;
  const release = () => {
    unwatch();
    clearTimeout(bootTimer);
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  return {
    booted(worker) {
      clearTimeout(bootTimer);
      stop = worker.stop;
      void worker.done.finally(release);
      if (pending) {
        stopping = true;
        void stop(pending);
      }
    },
    release,
  };
}
