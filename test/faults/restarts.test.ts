// @module-tag redis
// Fault scenario 3, "infrastructure restarts": while a worker process backfills, its Redis is
// restarted, then its PostgreSQL. The worker recovers on its own (reconnects, retries the job),
// the backfill ends exact, and the worker's log has one warning per outage, not a flood.
// Redis is down 3 s. PostgreSQL is down 3 s in the fast subset, and 40 s in full runs: longer
// than a job's own retries last (5 attempts, backoff 2+4+8+16 s), so a job that meets an outage
// must wait for the database instead of spending its attempts.
// Both servers are private to this file (the shared test services are never restarted): a
// redis-server with its append-only file on, as the README asks for production, and a PostgreSQL
// cluster in a temporary directory.
// Full size (npm run test:faults): 40,000 bills. Fast subset (npm test): 12,000 bills.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.ts";
import { migrateDeploy } from "../../src/store/migrate/index.ts";
import type { Proc } from "../support/processes.ts";
import { waitFor } from "../support/processes.ts";
import { compareWithTruth, describeExactness, isExact } from "./support/exactness.ts";
import { FULL, keepOutput, report, runSeed } from "./support/mode.ts";
import {
  startPrivatePostgres,
  startPrivateRedis,
  type PrivatePostgres,
  type PrivateRedis,
} from "./support/private-services.ts";
import {
  isWarnOrWorse,
  kill,
  logLines,
  nonLogLines,
  startBackfillProcess,
  startWorkerProcess,
  workerEnv,
  type LogLine,
} from "./support/worker.ts";

const BILLS = FULL ? 40_000 : 12_000;
const REDIS_OUTAGE_MS = 3000;
const POSTGRES_OUTAGE_MS = FULL ? 40_000 : 3000;
const DAY = 86_400_000;
const START = Date.UTC(2026, 4, 1);
const END = START + (FULL ? 40 : 12) * DAY - 1;

const seed = runSeed();
let postgres: PrivatePostgres | undefined;
let redis: PrivateRedis | undefined;
let databaseUrl: string;
beforeAll(async () => {
  process.stdout.write(`[faults] restarts: seed ${seed}\n`);
  [postgres, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  await admin.query("CREATE DATABASE ledger");
  await admin.end();
  databaseUrl = postgres.url.replace(/\/postgres$/, "/ledger");
  await migrateDeploy(databaseUrl);
});
afterAll(async () => {
  await Promise.allSettled([postgres?.destroy(), redis?.destroy()]);
});

async function billCount(account: string): Promise<number> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return Number(
      (await c.query<{ n: string }>("SELECT count(*) AS n FROM bills WHERE account_name = $1", [account])).rows[0]!.n,
    );
  } finally {
    await c.end();
  }
}

describe("fault scenario 3: infrastructure restarts", () => {
  it(
    `Redis, then PostgreSQL restarted mid-backfill (${BILLS.toLocaleString("en-US")} bills): the worker recovers alone, ends exact, logs each outage once`,
    async () => {
      // A budget of 10 bills requests a second in a 1 s window, on both sides: the worker fetches
      // and writes steadily (not in bursts with pauses an outage could fall into), and the run
      // lasts long enough for two outages.
      const budget = { ipWeight: 50, uidWeight: 50, windowMs: 1000 };
      const sandbox = await startSandbox({
        seed: 3000 + (seed % 1000),
        billCount: BILLS,
        startMs: START,
        endMs: END,
        limits: budget,
      });
      const truth = sandbox.truth();
      const account = "restarts";
      const env = workerEnv({
        databaseUrl,
        redisUrl: redis!.url,
        prefix: "ls",
        sandboxUrl: sandbox.url,
        account,
        // debug: the postponed job attempts are debug lines.
        extra: {
          LOG_LEVEL: "debug",
          RATE_LIMIT_IP_WEIGHT: String(budget.ipWeight),
          RATE_LIMIT_UID_WEIGHT: String(budget.uidWeight),
          RATE_LIMIT_WINDOW_MS: String(budget.windowMs),
        },
      });
      let worker: Proc | undefined;
      let backfill: Proc | undefined;
      try {
        worker = await startWorkerProcess(env);
        backfill = startBackfillProcess(env, truth[0]!.cTimeMs, truth.at(-1)!.cTimeMs, 24);
        const finished = () => backfill!.child.exitCode !== null;
        const progressed = (n: number) =>
          waitFor(`${n} bills stored`, async () => finished() || (await billCount(account)) >= n, 300_000, 200);

        // Redis down, then back (same port, same append-only file).
        await progressed(Math.floor(truth.length * 0.2));
        const atRedis = await billCount(account);
        await redis!.stop();
        await new Promise((r) => setTimeout(r, REDIS_OUTAGE_MS));
        await redis!.start();
        const redisUp = Date.now();
        await progressed(atRedis + Math.floor(truth.length * 0.1));

        // PostgreSQL down (fast shutdown: every connection is cut), then back.
        const atPg = await billCount(account);
        await postgres!.stop("fast");
        await new Promise((r) => setTimeout(r, POSTGRES_OUTAGE_MS));
        await postgres!.start();
        const pgUp = Date.now();
        await progressed(atPg + Math.floor(truth.length * 0.1));
        expect(
          finished(),
          `the backfill command ended before both outages were over (exit ${backfill.child.exitCode}): ${backfill.output().slice(-1500)}`,
        ).toBe(false);

        const code = await backfill.exited;
        expect(code, backfill.output().slice(-3000)).toBe(0);
        const e = await compareWithTruth(databaseUrl, account, truth);
        worker.signal("SIGTERM");
        const workerCode = await worker.exited;

        const lines = logLines(worker.output());
        const show = (ls: LogLine[]) =>
          ls.map(
            (l) =>
              `${l.level === 40 ? "warn" : l.level >= 50 ? "error" : "info"} ${l.msg}${l.err ? ` (${String(l.err).slice(0, 160)})` : ""}${l.downMs === undefined ? "" : ` downMs=${l.downMs} errors=${l.errors}`}`,
          );
        const outageLines = lines.filter((l) => l.dependency !== undefined);
        // Recovery: from the server being back to the worker's next committed write.
        const firstWriteAfter = (at: number) => {
          const w = lines.find((l) => l.msg === "windows committed" && Date.parse(String(l.time)) >= at);
          return w === undefined ? null : Date.parse(String(w.time)) - at;
        };
        const postponed = lines.filter((l) => l.msg === "job postponed: a dependency is unavailable");
        const cliLines = logLines(backfill.output());
        const strayCliOutput = nonLogLines(backfill.output()).filter(
          (l) => !/^\S+ backfill: \d+\/\d+ windows/.test(l) && !/^backfill complete: /.test(l),
        );
        report("restarts", {
          seed,
          bills: truth.length,
          redis: { outageMs: REDIS_OUTAGE_MS, billsAtOutage: atRedis, firstWriteAfterBackMs: firstWriteAfter(redisUp) },
          postgres: {
            outageMs: POSTGRES_OUTAGE_MS,
            billsAtOutage: atPg,
            firstWriteAfterBackMs: firstWriteAfter(pgUp),
            jobAttemptsPostponed: postponed.length,
          },
          workerWarnOrWorse: show(lines.filter(isWarnOrWorse)),
          workerOutageLines: show(outageLines),
          workerOtherOutput: nonLogLines(worker.output()).slice(0, 10),
          backfillCommandWarnOrWorse: show(cliLines.filter(isWarnOrWorse)),
          backfillCommandStrayOutput: strayCliOutput.slice(0, 10),
          result: describeExactness(e),
        });
        expect(isExact(e), describeExactness(e)).toBe(true);
        expect(workerCode).toBe(0);
        // Each outage: one warning, one recovery line; nothing else at warn or above, nothing printed raw.
        const unavailable = (what: string) =>
          `${what} unavailable: waiting for it to come back (further errors are counted, not logged)`;
        expect(show(lines.filter(isWarnOrWorse))).toEqual([
          expect.stringContaining(unavailable("redis")),
          expect.stringContaining(unavailable("postgres")),
        ]);
        expect(outageLines.map((l) => l.msg)).toEqual([
          unavailable("redis"),
          "redis recovered",
          unavailable("postgres"),
          "postgres recovered",
        ]);
        expect(nonLogLines(worker.output())).toEqual([]);
        // The jobs that met PostgreSQL's outage were postponed and retried by the queue, not by a
        // person, without spending attempts: no job failed.
        expect(postponed.length).toBeGreaterThan(0);
        expect(lines.filter((l) => l.msg === "job failed")).toEqual([]);
        // The watching command too: at most one warning per outage, no stack traces.
        const cliWarnings = cliLines.filter(isWarnOrWorse).map((l) => l.msg);
        expect(cliWarnings.filter((m) => m === unavailable("redis")).length).toBeLessThanOrEqual(1);
        expect(cliWarnings.filter((m) => m === unavailable("postgres")).length).toBeLessThanOrEqual(1);
        expect(cliWarnings.filter((m) => m !== unavailable("redis") && m !== unavailable("postgres"))).toEqual([]);
        expect(strayCliOutput).toEqual([]);
      } finally {
        await kill(worker);
        await kill(backfill);
        keepOutput("restarts-worker", worker?.output());
        keepOutput("restarts-backfill", backfill?.output());
        await sandbox.close();
      }
    },
    FULL ? 900_000 : 240_000,
  );
});
