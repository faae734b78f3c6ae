// Redis Sentinel failover during work, on a master, a replica and a sentinel of our own on loopback
// (test/support/redis-sentinel.ts): BullMQ jobs run through connections opened by the factory
// (REDIS_SENTINELS, REDIS_SENTINEL_NAME) while the master is switched (`SENTINEL FAILOVER`) or
// killed (kill -9). The connections must follow the sentinels to the new master (a write refused
// with READONLY reconnects and is resent), work must resume, and every job must complete.
// Shared by test/config/redis-sentinel.test.ts and the infrastructure runner.
import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { Queue, Worker } from "bullmq";
import { loadConfig } from "../../../src/config/index.ts";
import { openRedis, type RedisClient } from "../../../src/config/redis-connection.ts";
import { sandboxExchangeEnv, startSandbox } from "../../../src/sandbox/index.ts";
import pg from "pg";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { createDb, type Db } from "../../../src/store/prisma.ts";
import { createMigratedDb } from "../migrated-db.ts";
import { startRedisSentinel, until, type RedisSentinelSet } from "../redis-sentinel.ts";
import { freePort, startCli, type Proc } from "../processes.ts";
import { asRows, storedBills } from "../sandbox-sync.ts";
import { overlappingRuns } from "./books.ts";
import { lastLine, stopProc } from "./scenario.ts";

export interface RedisScenarioOptions {
  /** CI size (fewer jobs) rather than the runner's. */
  small: boolean;
  log: (line: string) => void;
}

export interface RedisScenarioResult {
  ok: boolean;
  /** One summary line: the scenario, its figures, and what failed if anything did. */
  line: string;
}

/** `SENTINEL FAILOVER` while jobs run. */
export const redisSentinelFailover = (o: RedisScenarioOptions) => sentinelScenario("failover", o);

/** kill -9 of the master while jobs run: the sentinel notices after down-after-milliseconds (1 s). */
export const redisSentinelMasterKill = (o: RedisScenarioOptions) => sentinelScenario("kill", o);

/** `SENTINEL FAILOVER` while the worker backfills an account of the sandbox exchange. */
export const redisSentinelFailoverBackfill = (o: RedisScenarioOptions) => workerScenario("failover", o);

/** kill -9 of the master while the worker backfills an account of the sandbox exchange. */
export const redisSentinelKillBackfill = (o: RedisScenarioOptions) => workerScenario("kill", o);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sentinelScenario(fault: "failover" | "kill", o: RedisScenarioOptions): Promise<RedisScenarioResult> {
  const title = fault === "failover" ? "SENTINEL FAILOVER" : "kill -9 of the master";
  const total = o.small ? 80 : 400;
  const set = await startRedisSentinel({ sentinels: 1, downAfterMs: 1000 });
  const clients: RedisClient[] = [];
  let queue: Queue | undefined;
  let worker: Worker | undefined;
  try {
    // REDIS_URL's host:port is not used through Sentinel: port 1 would refuse any connection.
    const config = loadConfig({
      REDIS_URL: "redis://127.0.0.1:1/0",
      REDIS_SENTINELS: set.sentinels,
      REDIS_SENTINEL_NAME: set.name,
    });
    const errors: string[] = [];
    const open = () => {
      const c = openRedis(config, { maxRetriesPerRequest: null });
      c.on("error", (err: Error) => void errors.push(err.message));
      clients.push(c);
      return c;
    };
    const prefix = `ls-failover-${randomBytes(3).toString("hex")}`;
    const producer = open();
    queue = new Queue("work", { connection: producer, prefix });
    queue.on("error", (err) => void errors.push(err.message));
    await queue.addBulk(
      Array.from({ length: total }, (_, i) => ({ name: "w", data: { i }, opts: { jobId: `j${i}` } })),
    );
    // The jobs are on the replica too before any fault: what is measured is our side, not Redis's
    // asynchronous replication.
    await producer.wait(1, 5000);
    o.log(`${total} jobs queued on the master (port ${await set.masterPort()})`);

    const done = new Map<string, number>();
    let faultAt = 0;
    let switchedAt = Number.POSITIVE_INFINITY;
    let resumedAt: number | undefined;
    worker = new Worker(
      "work",
      async () => {
        const startedAt = Date.now();
        await sleep(40);
        return { startedAt };
      },
      { connection: open(), prefix, concurrency: 2, lockDuration: 4000, stalledInterval: 2000, maxStalledCount: 5 },
    );
    worker.on("error", (err) => void errors.push(err.message));
    worker.on("completed", (job, result: { startedAt: number }) => {
      done.set(job.id!, (done.get(job.id!) ?? 0) + 1);
      // Resumed: a job taken once the sentinels named the new master has completed (taken from it and
      // completed on it); measured from the fault.
      if (resumedAt === undefined && result.startedAt > switchedAt) resumedAt = Date.now();
    });

    await until(async () => done.size >= total / 4, 30_000, "the jobs did not start before the fault");
    const oldMaster = await set.masterPort();
    faultAt = Date.now();
    if (fault === "failover") await set.failover();
    else await set.kill(oldMaster);
    const newMaster = await set.waitForNewMaster(oldMaster);
    switchedAt = Date.now();
    o.log(`${title}: the sentinels name port ${newMaster} after ${((Date.now() - faultAt) / 1000).toFixed(1)} s`);
    const failures: string[] = [];
    await until(async () => resumedAt !== undefined, 45_000, "no job completed after the fault").catch((err: Error) =>
      failures.push(err.message),
    );
    await until(async () => done.size >= total, 60_000, "not every job completed").catch((err: Error) =>
      failures.push(err.message),
    );
    const counts = await queue.getJobCounts("completed", "failed", "wait", "active", "delayed");
    const lost = total - done.size;
    const twice = [...done.values()].reduce((s, n) => s + n - 1, 0);
    const readonly = errors.filter((e) => e.includes("READONLY")).length;
    if (lost > 0) failures.push(`${lost} jobs never completed`);
    if ((counts.completed ?? 0) !== total)
      failures.push(`the new master holds ${counts.completed} completed jobs, not ${total}`);
    if ((counts.failed ?? 0) > 0) failures.push(`${counts.failed} jobs failed`);
    const resumed = resumedAt === undefined ? "never" : `${((resumedAt - faultAt) / 1000).toFixed(1)} s`;
    const line =
      `redis-sentinel ${title} during work: resumed in ${resumed}, jobs lost ${lost} of ${total}, ` +
      `run twice ${twice}, READONLY errors seen ${readonly}` +
      (failures.length > 0 ? `; FAILED: ${failures.join("; ")}` : "");
    o.log(line);
    return { ok: failures.length === 0, line };
  } finally {
    await worker?.close().catch(() => undefined);
    await queue?.close().catch(() => undefined);
    for (const c of clients) c.disconnect();
    await set.stop();
  }
}

/**
 * Two worker processes (`ledger-sync worker`) configured with REDIS_SENTINELS backfill an account;
 * the fault comes once a quarter of the bills are stored. The books must end exact, the exchange's
 * weight limit never refused a request (its 429 count, the sandbox's `rateLimited`, is 0), and no two
 * runs of the account's bills or snapshots overlap in sync_runs (one writer at a time).
 */
async function workerScenario(fault: "failover" | "kill", o: RedisScenarioOptions): Promise<RedisScenarioResult> {
  const title = fault === "failover" ? "SENTINEL FAILOVER" : "kill -9 of the master";
  const account = "failover";
  const workerCount = 2;
  // Small enough for CI; the exchange's weight budget makes the backfill last several seconds.
  const billCount = o.small ? 12_000 : 60_000;
  const limits = { ipWeight: 200, uidWeight: 150, windowMs: 1000 };
  const set: RedisSentinelSet = await startRedisSentinel({ sentinels: 1, downAfterMs: 1000 });
  const database = await scenarioDatabase().catch(async (err: unknown) => {
    await set.stop();
    throw err;
  });
  const sandbox = await startSandbox({ seed: 41, billCount, limits });
  const workers: Proc[] = [];
  try {
    const truth = sandbox.truth();
    const env: Record<string, string> = {
      ...sandboxExchangeEnv(sandbox.url),
      ACCOUNT_NAME: account,
      BACKFILL_FROM: String(truth[0]!.cTimeMs),
      DATABASE_URL: database.url,
      REDIS_URL: "redis://127.0.0.1:1",
      REDIS_SENTINELS: set.sentinels,
      REDIS_SENTINEL_NAME: set.name,
      BILLS_INTERVAL_MS: "1000",
      RATE_LIMIT_IP_WEIGHT: String(limits.ipWeight),
      RATE_LIMIT_UID_WEIGHT: String(limits.uidWeight),
      RATE_LIMIT_WINDOW_MS: String(limits.windowMs),
      JOB_LOCK_DURATION_MS: "3000",
      LOG_LEVEL: "warn",
      LOG_FORMAT: "json",
      SHUTDOWN_TIMEOUT_MS: "5000",
    };
    loadConfig(env); // refused here, with its reason, rather than by both processes
    const count = async () =>
      Number(
        (
          await database.db.$queryRawUnsafe<{ n: bigint }[]>(
            "SELECT count(*) AS n FROM bills WHERE account_name = $1",
            account,
          )
        )[0]!.n,
      );
    const startedAt = Date.now();
    for (let i = 0; i < workerCount; i++)
      workers.push(startCli(["worker"], { ...env, METRICS_PORT: String(await freePort()) }));
    const failures: string[] = [];
    const exitedEarly = () => workers.findIndex((w) => w.child.exitCode !== null || w.child.signalCode !== null);
    // A worker that exits at start (its configuration refused) ends the wait at once, naming why.
    await until(
      async () => exitedEarly() !== -1 || (await count()) >= truth.length / 4,
      60_000,
      "the backfill did not get under way",
    );
    const deadAtStart = exitedEarly();
    if (deadAtStart !== -1)
      throw new Error(`worker ${deadAtStart} exited: ${lastLine(workers[deadAtStart]!.output())}`);
    const oldMaster = await set.masterPort();
    const faultAt = Date.now();
    const atFault = await count();
    const refusedBeforeFault = sandbox.stats().rateLimited;
    if (fault === "failover") await set.failover();
    else await set.kill(oldMaster);
    const newMaster = await set.waitForNewMaster(oldMaster);
    const switchedAt = Date.now();
    const atSwitch = await count();
    if (atSwitch >= truth.length) failures.push("the backfill ended before the new master was named: make it longer");
    o.log(
      `${title} at ${atFault} bills, ${(faultAt - startedAt) / 1000} s in: the sentinels name port ${newMaster} after ${(switchedAt - faultAt) / 1000} s`,
    );
    // Resumed: the stored count grows past what it was once the new master was named (each
    // request's weight is charged in Redis first, so a new bill means Redis answers again).
    let resumedAt: number | undefined;
    await until(
      async () => {
        if (atSwitch >= truth.length || (await count()) <= atSwitch) return false;
        resumedAt = Date.now();
        return true;
      },
      45_000,
      "no bill was stored after the new master was named",
    ).catch((err: Error) => failures.push(err.message));
    let stored = 0;
    await until(async () => (stored = await count()) >= truth.length, 120_000, "the backfill did not complete").catch(
      (err: Error) => failures.push(err.message),
    );
    const dead = exitedEarly();
    if (dead !== -1) failures.push(`worker ${dead} exited during the run: ${lastLine(workers[dead]!.output())}`);
    for (const [i, w] of workers.entries())
      if (!(await stopProc(w, 15_000))) failures.push(`worker ${i} did not stop on SIGTERM`);
    const exact = isDeepStrictEqual(await storedBills(database.db, account), asRows(truth));
    if (!exact) failures.push(`the stored bills differ from the exchange's (${stored} of ${truth.length})`);
    const stats = sandbox.stats();
    if (stats.rateLimited > 0) failures.push(`the exchange refused ${stats.rateLimited} requests for their weight`);
    const overlaps = await overlappingRuns(database.url);
    for (const ov of overlaps.slice(0, 3)) failures.push(`overlap ${ov.account} ${ov.group}: ${ov.runs}`);
    const resumed = resumedAt === undefined ? "never" : `${((resumedAt - faultAt) / 1000).toFixed(1)} s`;
    const line =
      `redis-sentinel ${title} during backfill, ${workerCount} workers: resumed in ${resumed}, ` +
      `bills ${stored} of ${truth.length}, bills ${exact ? "exact" : "NOT exact"}, ` +
      `weight refusals (429) ${stats.rateLimited} (${refusedBeforeFault} before the fault), peak UID weight ${stats.maxUidWeightInWindow}/${limits.uidWeight}, ` +
      `overlapping runs ${overlaps.length}` +
      (failures.length > 0 ? `; FAILED: ${failures.join("; ")}` : "");
    o.log(line);
    return { ok: failures.length === 0, line };
  } finally {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.signal("SIGKILL");
    await Promise.all(workers.map((w) => w.exited));
    await sandbox.close();
    await database.close();
    await set.stop();
  }
}

export interface ScenarioDatabase {
  url: string;
  db: Db;
  close(): Promise<void>;
}

/**
 * A fresh migrated database: on TEST_DATABASE_URL's server when it is set (the infrastructure
 * runner, outside vitest), else on the test run's server (test/support/migrated-db.ts).
 */
export async function scenarioDatabase(): Promise<ScenarioDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) return createMigratedDb();
  const name = `ls_redis_infra_${randomBytes(6).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  try {
    await migrateDeploy(url);
  } catch (err) {
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    throw err;
  }
  const db = createDb(url);
  return {
    url,
    db,
    close: async () => {
      await db.$disconnect();
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
