// Runs a planned backfill through the queue: the windows are enqueued for the workers, and this
// process watches their progress in the database.
import { openRedis, redisReady } from "../config/redis-connection.ts";
import { requireNoEviction } from "../config/redis-policy.ts";
import { BackfillQueue, BACKFILL_RETRY } from "../jobs/backfill-queue.ts";
import { bullmqOptions } from "../jobs/queues.ts";
import { isRedisUnavailable } from "../jobs/redis-errors.ts";
import { OutageLog } from "../log/outage-log.ts";
import { createDb, isDatabaseUnavailable } from "../store/prisma.ts";
import { beyondHorizonOf, progressOf, type BackfillOutcome, type RunArgs } from "./backfill-runner.ts";
import { ProgressReporter } from "./progress.ts";

/**
 * Enqueue every window (deterministic ids: a second enqueue adds nothing) and watch until done.
 * The workers ride out a Redis or PostgreSQL outage, and so does the watch: it waits (one warning
 * per outage) instead of failing while the windows are still being worked on.
 */
export async function runQueued({
  config,
  logger,
  databaseUrl,
  plans,
  redisUrl,
}: RunArgs & { redisUrl: string }): Promise<BackfillOutcome> {
  // Listening for Ctrl-C from the first moment: a signal during the Redis checks below (or in a
  // worker of this process, which stops on it) must still end the watching, never leave it waiting
  // for windows no worker will run.
  const stopped = new AbortController();
  const onSignal = () => stopped.abort();
  process.once("SIGINT", onSignal);
  const redis = openRedis(config, { url: redisUrl, maxRetriesPerRequest: null });
  const redisOutage = new OutageLog(logger, "redis", { probe: () => redis.ping() });
  const onRedisError = (err: Error) =>
    isRedisUnavailable(err) ? redisOutage.failed(err) : logger.warn({ err: err.message }, "redis error");
  // Before the queue is used: a certificate that does not verify, or a Redis that would evict the
  // windows' jobs, ends the command with its one line (config/redis-policy.ts).
  let eviction;
  try {
    await redisReady(redis, redisUrl, config, onRedisError);
    redis.on("error", onRedisError);
    eviction = await requireNoEviction(redis, redisUrl, config, logger);
  } catch (err) {
    process.off("SIGINT", onSignal);
    redisOutage.close();
    redis.disconnect();
    throw err;
  }
  const queue = new BackfillQueue(redis, config.worker.queuePrefix, BACKFILL_RETRY, bullmqOptions(eviction));
  const db = createDb(databaseUrl);
  const postgresOutage = new OutageLog(logger, "postgres", { probe: () => db.$queryRawUnsafe("SELECT 1") });
  queue.onError(onRedisError);
  const reporter = new ProgressReporter("backfill");
  try {
    const windows = plans.flatMap((p) => p.windows);
    await queue.enqueue(windows);
    for (;;) {
      try {
        const p = await progressOf(db, plans);
        reporter.update({ done: p.windowsDone, total: p.windowsTotal, bills: p.bills });
        if (p.windowsDone === p.windowsTotal)
          return {
            complete: true,
            windows: p.windowsTotal,
            bills: p.bills,
            unverifiedMilliseconds: await queue.unverifiedMilliseconds(windows),
            beyondHorizon: await beyondHorizonOf(db, plans),
          };
        const failed = await queue.failedWindows(windows);
        if (failed.length > 0) {
          return {
            complete: false,
            reason:
              `${failed.length} backfill window(s) failed after all attempts; ` +
              `first: ${failed[0]!.id}: ${failed[0]!.reason} (rerun the same command to retry them)`,
          };
        }
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        postgresOutage.failed(err);
      }
      if (stopped.signal.aborted)
        return {
          complete: false,
          reason:
            "stopped watching; the queued windows keep running in the workers (rerun the same command to watch again)",
        };
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    redisOutage.close();
    postgresOutage.close();
    process.off("SIGINT", onSignal);
    await queue.close();
    await redis.quit().catch(() => redis.disconnect());
    await db.$disconnect();
  }
}
