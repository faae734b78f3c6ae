// One wrapper adds logging and metrics to every processor (langfuse-style): duration and outcome
// per queue and job, failures logged with the account, and the reason kept on the job by BullMQ.
import { DelayedError, type Job } from "bullmq";
import type { Logger } from "pino";
import type { Metrics } from "../ops/metrics.ts";

export type Processor<T> = (job: Job<T>, token?: string) => Promise<unknown>;

export function instrument<T extends { account: string }>(queue: string, processor: Processor<T>, logger: Logger, metrics: Metrics): Processor<T> {
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
      log.error({ err: { message: (err as Error).message, name: (err as Error).name } }, "job failed");
      throw err;
    }
  };
}
