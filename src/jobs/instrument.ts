// One wrapper adds logging and metrics to every processor (langfuse-style): duration and outcome
// per queue and job, failures logged with the account, and the reason kept on the job by BullMQ.
import { DelayedError, type Job } from "bullmq";
import type { Logger } from "pino";
import type { OutageLog } from "../log/outage-log.ts";
import type { Metrics } from "../ops/metrics.ts";

export type Processor<T> = (job: Job<T>, token?: string) => Promise<unknown>;

/**
 * `outageOf` names the outage a failure belongs to (PostgreSQL or Redis unreachable): the outage
 * is logged once, as a warning, and each job attempt it fails is an info line, since BullMQ
 * retries it. A job's last attempt failing is an error whatever the cause.
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
    const log = logger.child({ queue, job: job.name, jobId: job.id, account: job.data.account, attempt: job.attemptsMade + 1 });
    try {
      const result = await processor(job, token);
      metrics.jobFinished(queue, job.name, "completed", (performance.now() - started) / 1000);
      log.info({ result, ms: Math.round(performance.now() - started) }, "job completed");
      return result;
    } catch (err) {
      if (err instanceof DelayedError) throw err; // waiting for a lock, not a failure
      metrics.jobFinished(queue, job.name, "failed", (performance.now() - started) / 1000);
      const outage = outageOf(err);
      outage?.failed(err);
      const details = { err: { message: (err as Error).message, name: (err as Error).name } };
      if (outage && job.attemptsMade + 1 < (job.opts.attempts ?? 1)) log.info(details, "job failed during an outage; it will be retried");
      else log.error(details, "job failed");
      throw err;
    }
  };
}
