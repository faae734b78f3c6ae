// `ledger-sync worker`: the long-running process. Boot: connect, load the accounts (variables,
// ACCOUNTS_FILE and the accounts table, re-read every ACCOUNTS_REFRESH_MS), start the scheduler
// tick (due work from PostgreSQL into the queues), one BullMQ Worker per queue and the ops HTTP
// server. Shutdown (SIGTERM/SIGINT, or, when started through npm, the exit of the process that
// started it: parent-watch.ts): stop taking jobs, let running ones finish for up to
// SHUTDOWN_TIMEOUT_MS (then stop them at their next page: uncommitted work is simply redone from
// the cursor), then close workers, Redis, the HTTP server and Prisma, in that order.
import { setMaxListeners } from "node:events";
import { Worker, type Job } from "bullmq";
import { loadAccounts, type AccountConfig } from "../config/accounts.ts";
import { requireDatabaseUrl, requireRedisUrl, type Config } from "../config/index.ts";
import { openRedis, redisReady, redisServerName, redisTlsError } from "../config/redis-connection.ts";
import { requireNoEviction, type EvictionPolicyCheck } from "../config/redis-policy.ts";
import { consoleAccess, type ConsoleAccess } from "../console/access.ts";
import { openWorkerConsole } from "../console/worker-console.ts";
import type { Logger } from "../log/logger.ts";
import { OutageLog } from "../log/outage-log.ts";
import { checkHealth, postgresLastSuccess, postgresPing, redisPing, redisWriteProbe } from "../ops/health.ts";
import { OPS_DEFAULT_HOST, startOpsServer } from "../ops/http-server.ts";
import { refreshFleetGauges } from "../ops/fleet-gauges.ts";
import { createMetrics } from "../ops/metrics.ts";
import { createLeaseKeeper } from "../store/lease-keeper.ts";
import { loadAccountDirectory } from "../store/accounts/directory.ts";
import { createDb, isDatabaseUnavailable } from "../store/prisma.ts";
import { warnIfOverBudget } from "../store/connection-budget.ts";
import { watchConnectionSlots } from "../store/connection-slots.ts";
import { createAccountClients } from "./account-clients.ts";
import { watchAccounts } from "./account-watch.ts";
import type { WorkerContext } from "./context.ts";
import { instrument, type Processor } from "./instrument.ts";
import { processBackfillWindow } from "./processors/backfill.ts";
import { processBills } from "./processors/bills.ts";
import { processCrossCheck } from "./processors/cross-check.ts";
import { processResweep } from "./processors/resweep.ts";
import { processSnapshots } from "./processors/snapshots.ts";
import { bullmqOptions, closeQueues, createQueues, QUEUE_NAMES, type JobData, type QueueName } from "./queues.ts";
import { isRedisUnavailable } from "./redis-errors.ts";
import { workerSignals } from "./worker-signals.ts";
import {
  removeLegacySchedulers,
  RESWEEP_EVERY_MS,
  startSchedulerTick,
  wantedWork,
  type SchedulerIntervals,
} from "./schedulers.ts";
import { pgPoolConfig } from "../store/pg-config.ts";

export interface RunningWorker {
  /** Resolves when the worker has shut down (after a signal or stop()). */
  done: Promise<void>;
  stop(reason: string): Promise<void>;
  metricsUrl: string;
}

export async function startWorker(config: Config, logger: Logger): Promise<RunningWorker> {
  // Configuration errors first: they are the caller's one-line refusal, before anything starts.
  // The variables' and ACCOUNTS_FILE's accounts are checked before anything connects.
  if (config.accountsFile || config.exchange.credentials) loadAccounts(config);
  const settings: BootSettings = {
    databaseUrl: requireDatabaseUrl(config),
    redisUrl: requireRedisUrl(config),
    // The ops port listens on every interface: a console there needs CONSOLE_TOKEN (refused now if missing).
    console: config.console.enabled ? consoleAccess(OPS_DEFAULT_HOST, config.console.token) : undefined,
  };
  // Signals are taken from here on: a SIGTERM while connecting (a rollout, a supervisor stopping a
  // worker it just started) waits for boot to finish and then shuts down in order, instead of
  // killing the process on Node's default action.
  const signals = workerSignals(logger, config.worker.shutdownTimeoutMs);
  logger.info({ pid: process.pid }, "worker starting");
  try {
    const worker = await boot(config, logger, settings);
    signals.booted(worker);
    return worker;
  } catch (err) {
    signals.release();
    throw err;
  }
}

interface BootSettings {
  databaseUrl: string;
  redisUrl: string;
  console: ConsoleAccess | undefined;
}

async function boot(
  config: Config,
  logger: Logger,
  { databaseUrl, redisUrl, console: consoleRule }: BootSettings,
): Promise<RunningWorker> {
  const prefix = config.worker.queuePrefix;
  const startedAt = new Date();

  // BullMQ needs maxRetriesPerRequest: null; the same connection serves locks and weight budgets.
  const redis = openRedis(config, { url: redisUrl, maxRetriesPerRequest: null });
  // Health pings get their own client: BullMQ's (maxRetriesPerRequest: null) would queue a ping
  // forever while Redis is down instead of failing it.
  const healthRedis = openRedis(config, { url: redisUrl, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  healthRedis.on("error", () => undefined);
  // DATABASE_POOL_MAX connections in all: the pool's, and one the run-lease keeper opens only to
  // take, renew or free leases. Jobs wait for a pool connection rather than opening more
  // (docs/design/connections.md).
  // With the console on, one connection of the budget is the console's (read-only sessions).
  const consoleConnections = consoleRule ? 1 : 0;
  const db = createDb(databaseUrl, { poolMax: Math.max(1, config.database.poolMax - 1 - consoleConnections) });
  // While Redis or PostgreSQL is down every connection retries, and every job touching it fails:
  // one warning per outage and one line on recovery, not one line per attempt.
  const redisOutage = new OutageLog(logger, "redis", { probe: () => healthRedis.ping() });
  const postgresOutage = new OutageLog(logger, "postgres", { probe: () => db.$queryRawUnsafe("SELECT 1") });
  // A server with every connection slot taken: connections wait for one (connection-slots.ts); the
  // log says so once per episode, not once per refused attempt.
  const unwatchSlots = watchConnectionSlots({
    onWait: (w) =>
      logger.warn(
        { sqlstate: w.sqlstate },
        "postgres has no connection slot free: waiting for one (see max_connections and DATABASE_POOL_MAX)",
      ),
    onResume: (w) => logger.info(w, "postgres connection slots free again"),
  });
  // The jobs' account run leases: rows renewed together, no connection held for them.
  const leases = createLeaseKeeper(pgPoolConfig(databaseUrl), {
    ttlMs: config.database.runLeaseMs,
    what: "worker",
    onLost: (account, group, err) =>
      logger.warn({ account, group, err: err.message }, "run lease lost: the job writing the account stops"),
    // PostgreSQL going away is the outage log's to report (once); anything else is a warning here.
    onRenewError: (err) => {
      if (isDatabaseUnavailable(err)) postgresOutage.failed(err);
      else logger.warn({ err: err instanceof Error ? err.message : String(err) }, "could not renew run leases");
    },
  });
  const outageOf = (err: unknown) =>
    isDatabaseUnavailable(err) ? postgresOutage : isRedisUnavailable(err) ? redisOutage : undefined;
  const onRedisError = (source: Record<string, string>) => (err: Error) => {
    // A certificate that stopped verifying (rotated, expired) is an outage too, reported by its line.
    const tls = redisTlsError(err, redisUrl, config);
    if (tls) redisOutage.failed(tls);
    else if (isRedisUnavailable(err)) redisOutage.failed(err);
    else logger.warn({ ...source, err: err.message }, "redis error");
  };
  const metrics = createMetrics();
  // A configuration error here (a wrong master key, a name in two places) ends the boot: exit 2.
  // So does, before any queue is used, a Redis certificate that does not verify or a Redis that
  // would evict keys (config/redis-policy.ts).
  let directory: Awaited<ReturnType<typeof loadAccountDirectory>>;
  let eviction: EvictionPolicyCheck;
  try {
    await redisReady(redis, redisUrl, config, onRedisError({ connection: "main" }));
    redis.on("error", onRedisError({ connection: "main" }));
    eviction = await requireNoEviction(redis, redisUrl, config, logger);
    directory = await loadAccountDirectory(config, db);
    await warnIfOverBudget(db, config.database.poolMax, logger);
  } catch (err) {
    unwatchSlots();
    await Promise.allSettled([leases.close(), db.$disconnect()]);
    redis.disconnect();
    healthRedis.disconnect();
    throw err;
  }
  for (const u of directory.unreadable)
    logger.error({ account: u.account, err: u.error.message }, "account not synced: its credentials cannot be opened");
  const clients = createAccountClients(config, directory.accounts, redis, logger, metrics);
  const current = (): AccountConfig[] => [...clients.runtimes.values()].map((r) => r.account);
  const forceStop = new AbortController();
  // Every running job's lease listens on it: as many listeners as WORKER_CONCURRENCY, not a leak.
  setMaxListeners(0, forceStop.signal);
  const ctx: WorkerContext = {
    config,
    db,
    leases,
    redis,
    accounts: clients.runtimes,
    logger,
    metrics,
    forceStop: forceStop.signal,
  };

  const queues = createQueues(redis, prefix, bullmqOptions(eviction));
  for (const q of Object.values(queues)) q.on("error", onRedisError({ queue: q.name }));
  const legacy = await removeLegacySchedulers(queues);
  if (legacy.length > 0)
    logger.info({ removed: legacy.length }, "per-account job schedulers of an earlier version removed");
  const intervals: SchedulerIntervals = {
    billsMs: config.worker.billsIntervalMs,
    snapshotsMs: config.worker.snapshotIntervalMs,
    ...(config.resweepMs > 0 ? { resweepMs: RESWEEP_EVERY_MS } : {}),
    ...(config.crossCheckIntervalMs > 0 ? { crossCheckMs: config.crossCheckIntervalMs } : {}),
  };

  const processors: { [Q in QueueName]: Processor<JobData[Q]> } = {
    // The bills queue also carries each account's daily re-sweep and cross-check (low priority).
    bills: (job) =>
      job.name === "resweep"
        ? processResweep(ctx, job)
        : job.name === "cross-check"
          ? processCrossCheck(ctx, job)
          : processBills(ctx, job),
    snapshots: (job) => processSnapshots(ctx, job),
    backfill: (job, token) => processBackfillWindow(ctx, job, token, queues.backfill),
  };
  const workers = QUEUE_NAMES.map(
    (name) =>
      new Worker(
        name,
        instrument(name, processors[name] as Processor<{ account: string }>, logger, metrics, outageOf) as (
          job: Job,
        ) => Promise<unknown>,
        {
          connection: redis,
          prefix,
          ...bullmqOptions(eviction),
          // Jobs of different accounts run side by side, up to WORKER_CONCURRENCY; one account's
          // bills never do (its lock). The rest wait in the queue, stalest first.
          concurrency: config.worker.concurrency,
          // A job whose process died is taken over after the lock lapses (BullMQ stalled-job recovery).
          lockDuration: config.worker.jobLockDurationMs,
          // Look for stalled jobs twice per lock duration: a dead process's job is taken over between
          // 1 and 1.5 lock durations after its last renewal (with a check once per duration, up to 2).
          stalledInterval: Math.max(1000, Math.floor(config.worker.jobLockDurationMs / 2)),
          maxStalledCount: 5,
        },
      ),
  );
  for (const w of workers) {
    w.on("error", (err) => {
      if (isRedisUnavailable(err)) redisOutage.failed(err);
      else logger.warn({ queue: w.name, err: err.message }, "worker error");
    });
  }

  // Redis out of memory answers pings but refuses every write: /healthz and ledger_sync_redis_writable
  // see it by a tiny write of this process's own key, which expires. Nothing to reset when memory is
  // freed: BullMQ, the tick and the budgets retry their writes as they would after an outage.
  const redisWrite = redisWriteProbe(healthRedis, `${prefix}:health:${config.worker.egressId}:${process.pid}`, (ok) =>
    metrics.redisWritable(redisServerName(config, redisUrl), ok),
  );
  const workerConsole = consoleRule && openWorkerConsole(databaseUrl, consoleRule, logger, consoleConnections);
  const ops = await startOpsServer({
    port: config.worker.metricsPort,
    ...(workerConsole ? { console: workerConsole } : {}),
    metrics,
    logger,
    queues: Object.values(queues),
    bullBoard: config.worker.bullBoard,
    // The ops port has no authentication: the board shows, it does not act.
    bullBoardReadOnly: true,
    // Queue depths from Redis, the fleet gauges from PostgreSQL (one query). A failed read of
    // PostgreSQL is the outage log's to report (once per outage); the fleet gauges go absent.
    beforeScrape: async () => {
      const fleet = refreshFleetGauges(metrics, db, {
        names: current().map((a) => a.name),
        staleAfterMs: config.worker.healthMaxSyncAgeMs,
        billsIntervalMs: config.worker.billsIntervalMs,
        historyDaysDefault: config.exchange.limits.historyDays,
      }).catch((err: unknown) => {
        const outage = outageOf(err);
        if (outage) outage.failed(err as Error);
        else logger.warn({ err: (err as Error).message }, "could not read the fleet's health for /metrics");
      });
      await Promise.all([
        metrics.refreshQueueDepths(Object.values(queues)),
        fleet,
        redisWrite().catch(() => undefined), // its gauge says how it went
      ]);
    },
    health: () =>
      checkHealth({
        redisPing: redisPing(healthRedis),
        redisWrite,
        postgresPing: postgresPing((sql) => db.$queryRawUnsafe(sql)),
        lastSuccess: () =>
          postgresLastSuccess(
            (sql) => db.$queryRawUnsafe(sql),
            current().flatMap((a) => [
              { account: a.name, stream: "bills" },
              ...a.coinIds.map((c) => ({ account: a.name, stream: `snapshots:${c}` })),
            ]),
          ),
        maxAgeMs: config.worker.healthMaxSyncAgeMs,
        startedAt,
      }),
  });
  // While PostgreSQL or Redis is away, the tick and the accounts re-read fail each time: the
  // outage logs say so once.
  const failedWith = (what: string) => (err: unknown) => {
    const outage = outageOf(err);
    if (outage) outage.failed(err as Error);
    else logger.warn({ err: (err as Error).message }, what);
  };
  const tick = startSchedulerTick({
    db,
    queues,
    wanted: () => wantedWork(current(), intervals),
    tickMs: config.worker.schedulerTickMs,
    logger,
    onError: failedWith("scheduler tick failed; the next tick tries again"),
  });
  const watch = watchAccounts({
    config,
    db,
    clients,
    metrics,
    logger,
    everyMs: config.worker.accountsRefreshMs,
    onError: failedWith("could not re-read the accounts; keeping the current ones"),
  });
  logger.info({ metrics: ops.url, queues: QUEUE_NAMES, prefix, accounts: clients.runtimes.size }, "worker started");

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let stopping: Promise<void> | undefined;
  const stop = (reason: string) =>
    (stopping ??= (async () => {
      logger.info(
        { reason, timeoutMs: config.worker.shutdownTimeoutMs },
        "shutting down: no new jobs; waiting for running ones",
      );
      await Promise.all([tick.stop(), watch.stop()]);
      const closing = Promise.all(workers.map((w) => w.close()));
      const timer = setTimeout(() => {
        logger.warn("shutdown timeout: stopping running jobs at their next page (their committed progress is kept)");
        forceStop.abort(new Error("shutdown timeout"));
      }, config.worker.shutdownTimeoutMs);
      await closing;
      clearTimeout(timer);
      redisOutage.close();
      postgresOutage.close();
      unwatchSlots();
      await clients.close();
      await closeQueues(queues);
      await redis.quit().catch(() => redis.disconnect());
      healthRedis.disconnect();
      await ops.close();
      await workerConsole?.close();
      await leases.close();
      await db.$disconnect();
      logger.info("shut down cleanly");
    })().finally(resolveDone));

  return { done, stop, metricsUrl: ops.url };
}
