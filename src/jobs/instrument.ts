// One wrapper adds logging and metrics to every processor (langfuse-style): duration and outcome
// per queue and job, failures logged with the account, and the reason kept on the job by BullMQ.
import { DelayedError, type Job } from "bullmq";
import type { Logger } from "pino";
import type { OutageLog } from "../log/outage-log.ts";
import type { Metrics } from "../ops/metrics.ts";
import { asJobFailure } from "./permanent-failures.ts";

export type Processor<T> = (job: Job<T>, token?: string) => Promise<unknown>;

/** How long a job that met an outage waits before it is tried again (plus up to 1 s of jitter). */
export const OUTAGE_RETRY_MS = 2000;

/**
 * `outageOf` names the outage a failure belongs to (PostgreSQL or Redis unreachable). The outage
 * is logged once, as a warning, and the job waits for the dependency without spending one of
 * its attempts: with 5 attempts and exponential backoff, an outage longer than about 30 s would
 * otherwise fail every job that came up meanwhile, for good (a backfill would then need a rerun).
 */
export function instrument<T extends { account: string }>(
  queue: string,
  processor: Processor<T>,
  logger: Logger,
  metrics: Metrics,
  outageOf: (err: unknown) => OutageLog | undefined = () => undefined,
): Processor<T> {
  return async (job, token) => {
    const started = performance.now();
    const log = logger.child({
      queue,
      job: job.name,
      jobId: job.id,
      account: job.data.account,
      attempt: job.attemptsMade + 1,
    });
    try {
      const result = await processor(job, token);
      metrics.jobFinished(queue, job.name, "completed", (performance.now() - started) / 1000);
      log.info({ result, ms: Math.round(performance.now() - started) }, "job completed");
      return result;
    } catch (err) {
      if (err instanceof DelayedError) throw err; // waiting for a lock, not a failure
      metrics.jobFinished(queue, job.name, "failed", (performance.now() - started) / 1000);
      const details = { err: { message: (err as Error).message, name: (err as Error).name } };
      const outage = outageOf(err);
      if (outage && token !== undefined) {
        outage.failed(err);
        await job.moveToDelayed(Date.now() + OUTAGE_RETRY_MS + Math.floor(Math.random() * 1000), token);
        log.debug(details, "job postponed: a dependency is unavailable");
        throw new DelayedError();
      }
      const failure = asJobFailure(err);
      log.error(
        { ...details, retried: failure === err },
        failure === err ? "job failed" : "job failed for good: the exchange's answer will not change on a retry",
      );
      throw failure;
    }
  };
}
