// Runs a planned backfill inline or through the queue, reporting progress from the database.
import { Redis } from "ioredis";
import type { AccountConfig } from "../config/accounts.ts";
import type { Config } from "../config/index.ts";
import { exchangeClientFromConfig, localWeightGate } from "../exchange/client-from-config.ts";
import type { BackfillWindow } from "../jobs/backfill-plan.ts";
import { BackfillQueue } from "../jobs/backfill-queue.ts";
import { backfillCursorStream } from "../jobs/processors/backfill.ts";
import { isRedisUnavailable } from "../jobs/redis-errors.ts";
import type { Logger } from "../log/logger.ts";
import { OutageLog } from "../log/outage-log.ts";
import { backfillProgress } from "../store/backfill-progress.ts";
import { createDb, isDatabaseUnavailable, type Db } from "../store/prisma.ts";
import { syncAccountBills } from "../streams/bills/index.ts";
import { ProgressReporter } from "./progress.ts";

export interface BackfillPlan {
  account: AccountConfig;
  windows: BackfillWindow[];
}

interface RunArgs {
  config: Config;
  logger: Logger;
  databaseUrl: string;
  plans: BackfillPlan[];
}

export type BackfillOutcome = { complete: true; windows: number; bills: number; unverifiedMilliseconds: number[] } | { complete: false; reason: string };

async function progressOf(db: Db, plans: BackfillPlan[]) {
  let windowsDone = 0;
  let bills = 0;
  for (const p of plans) {
    const r = await backfillProgress(db, p.account.name, p.windows.map((w) => w.data), backfillCursorStream);
    windowsDone += r.windowsDone;
    bills += r.bills;
  }
  return { windowsDone, bills, windowsTotal: plans.reduce((n, p) => n + p.windows.length, 0) };
}

/** One window after another in this process; a rerun skips finished windows (their bookmarks). */
export async function runInline({ config, logger, databaseUrl, plans }: RunArgs): Promise<BackfillOutcome> {
  const db = createDb(databaseUrl);
  const reporter = new ProgressReporter("backfill (inline)");
  // One gate for every account: they share this process's IP (and, conservatively, one UID budget).
  const gate = localWeightGate(config);
  const unverified: number[] = [];
  try {
    for (const plan of plans) {
      const client = exchangeClientFromConfig(config, { credentials: plan.account.credentials, gate, logger });
      try {
        for (const w of plan.windows) {
          const s = await syncAccountBills({ db, client, logger, accountName: plan.account.name, backfillFromMs: w.data.fromMs, lookbackMs: 0, fromMs: w.data.fromMs, untilMs: w.data.toMs, cursorStream: backfillCursorStream(w.data.fromMs, w.data.toMs) });
          unverified.push(...s.unverifiedMilliseconds);
          reporter.update(await progressOf(db, plans));
        }
      } finally {
        await client.close();
      }
    }
    const p = await progressOf(db, plans);
    reporter.update(p, true);
    return { complete: true, windows: p.windowsTotal, bills: p.bills, unverifiedMilliseconds: unverified };
  } finally {
    await db.$disconnect();
  }
}

/**
 * Enqueue every window (deterministic ids: a second enqueue adds nothing) and watch until done.
 * The workers ride out a Redis or PostgreSQL outage, and so does the watch: it waits (one warning
 * per outage) instead of failing while the windows are still being worked on.
 */
export async function runQueued({ config, logger, databaseUrl, plans, redisUrl }: RunArgs & { redisUrl: string }): Promise<BackfillOutcome> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new BackfillQueue(redis, config.worker.queuePrefix);
  const db = createDb(databaseUrl);
  const redisOutage = new OutageLog(logger, "redis", { probe: () => redis.ping() });
  const postgresOutage = new OutageLog(logger, "postgres", { probe: () => db.$queryRawUnsafe("SELECT 1") });
  const onRedisError = (err: Error) => (isRedisUnavailable(err) ? redisOutage.failed(err) : logger.warn({ err: err.message }, "redis error"));
  redis.on("error", onRedisError);
  queue.onError(onRedisError);
  const reporter = new ProgressReporter("backfill");
  const stopped = new AbortController();
  const onSignal = () => stopped.abort();
  process.once("SIGINT", onSignal);
  try {
    const windows = plans.flatMap((p) => p.windows);
    await queue.enqueue(windows);
    for (;;) {
      try {
        const p = await progressOf(db, plans);
        reporter.update(p);
        if (p.windowsDone === p.windowsTotal) return { complete: true, windows: p.windowsTotal, bills: p.bills, unverifiedMilliseconds: await queue.unverifiedMilliseconds(windows) };
        const failed = await queue.failedWindows(windows);
        if (failed.length > 0) {
          return { complete: false, reason: `${failed.length} backfill window(s) failed after all attempts; first: ${failed[0]!.id}: ${failed[0]!.reason} (rerun the same command to retry them)` };
        }
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        postgresOutage.failed(err);
      }
      if (stopped.signal.aborted) return { complete: false, reason: "stopped watching; the queued windows keep running in the workers (rerun the same command to watch again)" };
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
