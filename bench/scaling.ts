// Item 5: scaling. Four accounts (the sandbox's extra API keys over the same history, each its own
// UID budget) backfilled through the queue by 1, 2 and 4 `ledger-sync worker` processes.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "../src/local-services/free-port.ts";
import { planBackfill } from "../src/jobs/backfill-plan.ts";
import { BackfillQueue } from "../src/jobs/backfill-queue.ts";
import { backfillCursorStream } from "../src/jobs/backfill-plan.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, type SandboxCredentials } from "../src/sandbox/index.ts";
import { backfillWindowsDone } from "../src/store/backfill-progress.ts";
import { createDb } from "../src/store/prisma.ts";
import { Cleanup } from "./cleanup.ts";
import { startCli } from "./cli-process.ts";
import { backendCpu, benchDatabase } from "./postgres.ts";
import { cpuSeconds, machineCpu } from "./proc-stats.ts";
import { benchRedis, redisServerCpu } from "./redis.ts";
import { int, pct, sec, type Row } from "./report.ts";
import { startSandboxProcess, type SandboxProcess } from "./sandbox-process.ts";

const ACCOUNTS = 4;
const DAY = 86_400_000;

export interface ScalingRun {
  processes: number;
  bills: number;
  seconds: number;
  requests: number;
  /** CPU seconds of the workers, the sandbox, the database's backends, and the whole machine. */
  cpu: { workers: number; sandbox: number; postgres: number; redis: number; machineBusy: number; machineTotal: number };
}

export interface ScalingResult {
  billsPerAccount: number;
  windowHours: number;
  windowsPerAccount: number;
  runs: ScalingRun[];
}

export async function scaling(
  billsPerAccount: number,
  processCounts: number[],
  windowHours: number,
): Promise<ScalingResult> {
  const scope = new Cleanup();
  try {
    const endMs = Date.now() - DAY;
    const startMs = endMs - 180 * DAY;
    const extra: SandboxCredentials[] = Array.from({ length: ACCOUNTS - 1 }, (_, i) => ({
      apiKey: `bench-key-${i + 1}`,
      apiSecret: `bench-secret-${i + 1}`,
      passphrase: `bench-pass-${i + 1}`,
    }));
    const credentials = [DEFAULT_SANDBOX_CREDENTIALS, ...extra];
    const sandbox = await startSandboxProcess(
      { seed: 17, billCount: billsPerAccount, startMs, endMs, limits: null, extraCredentials: extra },
      scope,
    );
    const dir = mkdtempSync(join(tmpdir(), "ls-bench-accounts-"));
    scope.add("remove the accounts file", () => rmSync(dir, { recursive: true, force: true }));
    const accountsFile = join(dir, "accounts.yaml");
    writeFileSync(
      accountsFile,
      `accounts:\n${credentials.map((_, i) => `  - name: acct${i}\n    apiKeyEnv: K${i}\n    apiSecretEnv: S${i}\n    passphraseEnv: P${i}\n`).join("")}`,
    );
    const secrets = Object.fromEntries(
      credentials.flatMap((c, i) => [
        [`K${i}`, c.apiKey],
        [`S${i}`, c.apiSecret],
        [`P${i}`, c.passphrase],
      ]),
    );
    const runs: ScalingRun[] = [];
    for (const processes of processCounts) {
      runs.push(
        await scalingRun({
          processes,
          sandbox,
          startMs,
          endMs,
          windowMs: windowHours * 3_600_000,
          accountsFile,
          secrets,
          accounts: credentials.length,
          billsPerAccount,
        }),
      );
    }
    return {
      billsPerAccount,
      windowHours,
      windowsPerAccount: planBackfill("x", startMs, endMs, windowHours * 3_600_000).length,
      runs,
    };
  } finally {
    await scope.run();
  }
}

interface RunInput {
  processes: number;
  sandbox: SandboxProcess;
  startMs: number;
  endMs: number;
  windowMs: number;
  accountsFile: string;
  secrets: Record<string, string>;
  accounts: number;
  billsPerAccount: number;
}

async function scalingRun(o: RunInput): Promise<ScalingRun> {
  const scope = new Cleanup();
  try {
    const database = await benchDatabase(scope);
    const redis = await benchRedis(scope);
    await o.sandbox.resetStats();
    const env = {
      ...o.secrets,
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: redis.prefix,
      EXCHANGE_BASE_URL: o.sandbox.url,
      ACCOUNTS_FILE: o.accountsFile,
      // The scheduled bills jobs cover only the last minute (nothing): the backfill does the history.
      BACKFILL_FROM: String(Date.now() - 60_000),
      BILLS_INTERVAL_MS: "3600000",
      // Limits off on both sides: what the processes themselves can do.
      RATE_LIMIT_IP_WEIGHT: "1000000000",
      RATE_LIMIT_UID_WEIGHT: "1000000000",
      SHUTDOWN_TIMEOUT_MS: "5000",
      LOG_LEVEL: "info",
    };
    const workers = [];
    for (let i = 0; i < o.processes; i++)
      workers.push(startCli(["worker"], { ...env, METRICS_PORT: String(await freePort()) }, scope, `worker ${i + 1}`));
    await Promise.all(workers.map((w) => w.waitForLine(/"worker started"/, 90_000)));

    const names = Array.from({ length: o.accounts }, (_, i) => `acct${i}`);
    const plans = names.map((name) => planBackfill(name, o.startMs, o.endMs, o.windowMs));
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    scope.add("close the queue connection", () => connection.quit());
    const queue = new BackfillQueue(connection, redis.prefix);
    scope.add("close the backfill queue", () => queue.close());
    const db = createDb(database.url);
    scope.add("disconnect Prisma", () => db.$disconnect());
    const pgCpu = await backendCpu(database, scope);
    const workerCpu0 = workers.map((w) => cpuSeconds(w.pid) ?? 0);
    const sandboxCpu0 = cpuSeconds(o.sandbox.pid) ?? 0;
    const redisCpu0 = await redisServerCpu(connection);
    const machine0 = machineCpu();

    const t0 = performance.now();
    await queue.enqueue(plans.flat());
    for (;;) {
      // Bookmarks only: counting the bills of the range every 200 ms was 8.6 of the run's 24.5 s
      // of PostgreSQL CPU (pg_stat_statements): the benchmark loading what it measures.
      const done = await Promise.all(
        names.map((n, i) =>
          backfillWindowsDone(
            db,
            n,
            plans[i]!.map((w) => w.data),
            backfillCursorStream,
          ),
        ),
      );
      await pgCpu.sample();
      if (done.every((d, i) => d === plans[i]!.length)) break;
      const failed = await queue.failedWindows(plans.flat());
      if (failed.length > 0) throw new Error(`backfill window ${failed[0]!.id} failed: ${failed[0]!.reason}`);
      for (const w of workers)
        if (w.child.exitCode !== null) throw new Error(`a worker exited (code ${w.child.exitCode}):\n${w.tail()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const seconds = (performance.now() - t0) / 1000;
    const machine1 = machineCpu();
    const workersCpu = workers.reduce((sum, w, i) => sum + (cpuSeconds(w.pid) ?? workerCpu0[i]!) - workerCpu0[i]!, 0);
    const sandboxCpu = (cpuSeconds(o.sandbox.pid) ?? sandboxCpu0) - sandboxCpu0;
    const redisCpu = (await redisServerCpu(connection)) - redisCpu0;
    const stored = (await db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM bills"))[0]?.n ?? 0;
    if (stored !== o.accounts * o.billsPerAccount)
      throw new Error(`scaling: stored ${stored} bills, expected ${o.accounts * o.billsPerAccount}`);
    const stats = await o.sandbox.stats();
    return {
      processes: o.processes,
      bills: stored,
      seconds,
      requests: stats.billsRequests,
      cpu: {
        workers: workersCpu,
        sandbox: sandboxCpu,
        postgres: pgCpu.seconds(),
        redis: redisCpu,
        machineBusy: machine1.busy - machine0.busy,
        machineTotal: machine1.total - machine0.total,
      },
    };
  } finally {
    await scope.run();
  }
}

export function scalingRows(r: ScalingResult, sizeNote: string): Row[] {
  const base = r.runs[0];
  return [
    [
      "accounts x bills each",
      `${ACCOUNTS} x ${int(r.billsPerAccount)}${sizeNote}; ${r.windowsPerAccount} windows of ${r.windowHours} h per account`,
    ],
    ...r.runs.map((run): Row => {
      const rate = run.bills / run.seconds;
      const vs =
        base && run !== base
          ? `, ${(rate / (base.bills / base.seconds)).toFixed(2)}x ${base.processes} process${base.processes > 1 ? "es" : ""}`
          : "";
      return [
        `${run.processes} worker process${run.processes > 1 ? "es" : ""}`,
        `${int(rate)} bills/s total (${sec(run.seconds)}${vs}); CPU s: workers ${run.cpu.workers.toFixed(1)}, sandbox ${run.cpu.sandbox.toFixed(1)}, PostgreSQL ${run.cpu.postgres.toFixed(1)}, Redis ${run.cpu.redis.toFixed(1)}; machine busy ${pct(run.cpu.machineBusy, run.cpu.machineTotal)}`,
      ];
    }),
  ];
}

export const SCALING_METHOD = [
  "The CLI is started as executing bin/ledger-sync.js starts it (the Docker image, npx): its first line's environment assignments and node options are applied (bench/cli-process.ts).",
  "The sandbox (own process, limits off) serves one history to 4 API keys (`extraCredentials`: 4 accounts, each its own UID). For each process count: a fresh database and Redis prefix, N `ledger-sync worker` processes with ACCOUNTS_FILE listing the 4 accounts and RATE_LIMIT_* out of the way (budgets still go through the Redis gate), each started and idle before the clock starts.",
  "Then every account's history is queued as backfill windows of --scaling-window-hours (default 24, as `ledger-sync backfill`; planBackfill + BackfillQueue.enqueue: what that command does) and the clock runs until every window's bookmark is at its end (backfillWindowsDone, polled every 200 ms). bills/s total = 4 × bills per account ÷ that time.",
  "An account's windows run one at a time and in time order (its bills lock), so at most 4 windows run at once whatever the process count; one process runs up to 4 jobs concurrently (concurrency = accounts).",
  "CPU seconds: the worker processes, the sandbox, the PostgreSQL backends of the database, and the Redis server (INFO cpu, before and after), over the run; machine busy = the whole machine's busy share (/proc/stat), every process included.",
];
