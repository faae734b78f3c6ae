// @module-tag redis
// Fault scenario 1, "crash anywhere": a worker process backfills the sandbox's history and is
// killed with SIGKILL at seeded random moments, restarted each time; at the end the database
// equals the truth (0 missing, 0 duplicate, 0 different). After every kill the committed state is
// checked too: every stored row exact, and no window bookmark ahead of its rows.
//
// Kill moments, in a fixed rotation of kinds with seeded parameters:
//   mid-write  while the worker's bills INSERT is executing (seen in pg_stat_activity)
//   mid-page   right after the sandbox has sent a bills page, before the worker has used it
//   time       a random time after the (re)start: during boot, takeover or work
//   progress   when the stored bill count reaches a random target
// Full size (npm run test:faults): 100,000 bills, 10 kills. Fast subset (npm test): 15,000, 3.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prng } from "../../src/sandbox/prng.ts";
import { startSandbox, type Sandbox, type SandboxBill } from "../../src/sandbox/index.ts";
import { migrateDeploy } from "../../src/store/migrate/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import type { Proc } from "../support/processes.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";
import { committedStateProblems, compareWithTruth, describeExactness, isExact } from "./support/exactness.ts";
import { FULL, report, runSeed } from "./support/mode.ts";
import { kill, logLines, startBackfillProcess, startWorkerProcess, workerEnv } from "./support/worker.ts";

const BILLS = FULL ? 100_000 : 15_000;
const KILLS = FULL ? 10 : 3;
const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 1);
const END = START + (FULL ? 60 : 20) * DAY - 1;
/** Short lock: a killed worker's job and account lock lapse after this (the default is 30 s; see the last test). */
const LOCK_MS = 2000;
const KINDS = ["mid-write", "mid-page", "time", "progress"] as const;
type KillKind = (typeof KINDS)[number];

const seed = runSeed();
let database: TestDatabase;
let redis: TestRedis;
let pgc: pg.Client;
beforeAll(async () => {
  process.stdout.write(`[faults] crash: seed ${seed} (replay with FAULTS_SEED=${seed})\n`);
  database = await createTestDatabase("ls_faults_crash");
  await migrateDeploy(database.url);
  redis = await createTestRedis();
  pgc = new pg.Client({ connectionString: database.url });
  await pgc.connect();
});
afterAll(async () => {
  await pgc?.end();
  await database?.drop();
  await redis?.cleanup();
});

const billCount = async (account: string) =>
  Number(
    (await pgc.query<{ n: string }>("SELECT count(*) AS n FROM bills WHERE account_name = $1", [account])).rows[0]!.n,
  );

/** The worker's bills write executing right now (a connection opened after `since`), if any. */
async function activeBillsWrite(since: Date): Promise<{ pid: number; queryStart: number } | undefined> {
  const r = await pgc.query<{ pid: number; query_start: Date }>(
    `SELECT pid, query_start FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
       AND backend_start >= $1 AND query LIKE '/* ledger-sync: bills window write */%' LIMIT 1`,
    [since],
  );
  const row = r.rows[0];
  return row && { pid: row.pid, queryStart: row.query_start.getTime() };
}

async function backendGone(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await pgc.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [pid]);
    if (r.rowCount === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface KillRecord {
  n: number;
  kind: KillKind;
  /** The drawn parameter: delay (ms), target count, page number or writes skipped. */
  param: number;
  /** ms from the worker's start to the kill. */
  afterStartMs: number;
  billsAtKill: number;
  /** mid-write: the INSERT seen before the kill was still executing right after it. */
  writeActiveAfterKill?: boolean;
  /** ms from the kill until the replacement worker started a backfill window. */
  resumedAfterMs?: number;
  committedState: string;
}

/** Watches the sandbox's responses: resolves after the n-th bills response since arming. */
class PageWatch {
  private left = 0;
  private hit: (() => void) | undefined;
  onLine = (line: string): void => {
    if (!this.hit || !line.startsWith("POST /capi/v2/account/bills") || !/-> 200 /.test(line)) return;
    if (--this.left <= 0) {
      const h = this.hit;
      this.hit = undefined;
      h();
    }
  };
  /** `onHit` runs synchronously inside the sandbox's response path. */
  arm(n: number, onHit: () => void): void {
    this.left = n;
    this.hit = onHit;
  }
  disarm(): void {
    this.hit = undefined;
  }
}

function waitForLine(
  p: Proc,
  test: (l: ReturnType<typeof logLines>[number]) => boolean,
  timeoutMs: number,
  abort: () => boolean,
): Promise<number | undefined> {
  const started = Date.now();
  return new Promise((resolve) => {
    const tick = () => {
      if (logLines(p.output()).some(test)) return resolve(Date.now() - started);
      if (Date.now() - started > timeoutMs || abort()) return resolve(undefined);
      setTimeout(tick, 20);
    };
    tick();
  });
}

describe("fault scenario 1: crash anywhere", () => {
  it(
    `SIGKILL at ${KILLS} seeded moments during a ${BILLS.toLocaleString("en-US")}-bill backfill: restarted each time, the end is exact`,
    async () => {
      const rng = new Prng(seed, "crash");
      const pages = new PageWatch();
      const sandbox: Sandbox = await startSandbox({
        seed: 1000 + (seed % 1000),
        billCount: BILLS,
        startMs: START,
        endMs: END,
        limits: null,
        log: pages.onLine,
      });
      const truth: SandboxBill[] = sandbox.truth();
      const account = "crash";
      const env = workerEnv({
        databaseUrl: database.url,
        redisUrl: redis.url,
        prefix: redis.prefix,
        sandboxUrl: sandbox.url,
        account,
        extra: {
          JOB_LOCK_DURATION_MS: String(LOCK_MS),
          RATE_LIMIT_IP_WEIGHT: "1000000",
          RATE_LIMIT_UID_WEIGHT: "1000000",
        },
      });
      let worker: Proc | undefined;
      let backfill: Proc | undefined;
      const kills: KillRecord[] = [];
      const started = Date.now();
      try {
        worker = await startWorkerProcess(env);
        let workerStartedAt = new Date();
        backfill = startBackfillProcess(env, truth[0]!.cTimeMs, truth.at(-1)!.cTimeMs, 24);
        const finished = () => backfill!.child.exitCode !== null;

        for (let k = 0; k < KILLS; k++) {
          const kind = KINDS[k % KINDS.length]!;
          const w = worker;
          let param = 0;
          let write: { pid: number; queryStart: number } | undefined;
          let writeActiveAfterKill: boolean | undefined;
          let killedAt = 0;
          const sigkill = () => {
            w.signal("SIGKILL");
            killedAt = Date.now();
          };
          // Spread over the whole history: every kill first waits for its share of it, so that the
          // schedule does not depend on how fast the backfill runs (a faster one had finished before
          // the last kills). A "time" kill then lands a random moment later, possibly mid-boot.
          const floor = Math.floor((truth.length * (k + rng.next())) / (KILLS + 1));
          while (!finished() && (await billCount(account)) < floor) await new Promise((r) => setTimeout(r, 25));
          // Wait for this kind's moment, then SIGKILL.
          if (kind === "time") {
            param = rng.range(0, FULL ? 2000 : 1500);
            // That moment, or sooner once half of this kill's share of the history is in: a fast
            // backfill finished the rest of the history within 1.5 s (CI, 2026-11-23).
            const until = Date.now() + param;
            const ceiling = floor + Math.floor(truth.length / (KILLS + 1) / 2);
            while (!finished() && Date.now() < until && (await billCount(account)) < ceiling)
              await new Promise((r) => setTimeout(r, 25));
            sigkill();
          } else if (kind === "progress") {
            param = floor + rng.range(1, Math.floor(truth.length / (KILLS + 1)));
            while (!finished() && (await billCount(account)) < param) await new Promise((r) => setTimeout(r, 25));
            sigkill();
          } else if (kind === "mid-page") {
            param = rng.range(1, FULL ? 60 : 40); // pages: ~75 bills each, under a share of the history
            await new Promise<void>((resolve) => {
              pages.arm(param, () => {
                sigkill(); // synchronously, while the page is on its way to the worker
                resolve();
              });
              void w.exited.then(() => resolve());
              // No more pages once the backfill is done: stop waiting (the check below then fails).
              const poll = setInterval(() => {
                if (!finished()) return;
                clearInterval(poll);
                resolve();
              }, 100);
              void w.exited.then(() => clearInterval(poll));
            });
            pages.disarm();
          } else {
            param = rng.range(0, 3); // writes to let through first
            const seen = new Set<string>();
            while (!finished()) {
              const active = await activeBillsWrite(workerStartedAt);
              if (active && !seen.has(`${active.pid}:${active.queryStart}`)) {
                if (seen.size >= param) {
                  sigkill();
                  write = active;
                  break;
                }
                seen.add(`${active.pid}:${active.queryStart}`);
              }
              await new Promise((r) => setTimeout(r, 2));
            }
            // Proof that the kill landed mid-statement: the same statement is still executing now.
            if (write)
              writeActiveAfterKill = (await activeBillsWrite(workerStartedAt))?.queryStart === write.queryStart;
          }
          // No kill (its moment never came): fail now rather than wait for a worker that runs on.
          if (killedAt === 0)
            throw new Error(
              `kill ${k + 1} of ${KILLS} (${kind}) never found its moment${finished() ? ": the backfill finished first" : ""}`,
            );
          await w.exited;
          if (finished())
            throw new Error(
              `the backfill finished before kill ${k + 1} of ${KILLS}: the history is too short for the kills`,
            );
          const billsAtKill = await billCount(account);
          // A statement whose client died runs to its end and commits or not as a whole.
          if (write) await backendGone(write.pid, 10_000);
          // What the crash left: exact rows, and no bookmark ahead of its rows.
          const state = await committedStateProblems(database.url, account, truth);
          const committedState = `${state.bookmarks} window bookmarks; ${describeExactness(state.exactness)}`;
          expect(
            state.exactness.different + state.exactness.extra + state.exactness.duplicate + state.uncovered,
            `after kill ${k + 1} (${kind}): ${committedState}`,
          ).toBe(0);

          worker = await startWorkerProcess(env);
          workerStartedAt = new Date();
          const resumedAfterMs = await waitForLine(
            worker,
            (l) => l.msg === "bills sync starting" && String(l.stream).startsWith("bills-backfill:"),
            120_000,
            finished,
          );
          kills.push({
            n: k + 1,
            kind,
            param,
            afterStartMs: killedAt - started,
            billsAtKill,
            ...(writeActiveAfterKill === undefined ? {} : { writeActiveAfterKill }),
            ...(resumedAfterMs === undefined
              ? {}
              : { resumedAfterMs: resumedAfterMs + (workerStartedAt.getTime() - killedAt) }),
            committedState,
          });
          process.stdout.write(
            `[faults] crash: kill ${k + 1}/${KILLS} ${kind}(${param}) at ${billsAtKill} bills${writeActiveAfterKill === undefined ? "" : writeActiveAfterKill ? " (its INSERT still executing after the kill)" : " (its INSERT ended within the kill's first milliseconds)"}; resumed after ${kills.at(-1)!.resumedAfterMs ?? "?"} ms\n`,
          );
        }

        const code = await backfill.exited;
        expect(code, backfill.output().slice(-2000)).toBe(0);
        expect(backfill.output()).toMatch(
          new RegExp(`backfill complete: \\d+ windows, ${truth.length} bills in range`),
        );
        const e = await compareWithTruth(database.url, account, truth);
        const totalMs = Date.now() - started;
        const resumes = kills.map((k) => k.resumedAfterMs).filter((v): v is number => v !== undefined);
        report("crash", {
          seed,
          bills: truth.length,
          kills: kills.length,
          lockDurationMs: LOCK_MS,
          totalSeconds: totalMs / 1000,
          resumeMs: {
            min: Math.min(...resumes),
            median: resumes.sort((a, b) => a - b)[Math.floor(resumes.length / 2)],
            max: Math.max(...resumes),
          },
          killsDetail: kills.map(({ committedState: _, ...k }) => k),
          result: describeExactness(e),
        });
        expect(isExact(e), describeExactness(e)).toBe(true);
        expect(kills.filter((k) => k.kind === "mid-write").length).toBeGreaterThan(0);

        const last = worker;
        // A signal before the process has loaded its code gets Node's default action (killed, no
        // exit code); from "worker starting" on, SIGTERM is an ordered shutdown, also mid-boot.
        await waitForLine(
          last,
          (l) => l.msg === "worker starting",
          60_000,
          () => false,
        );
        last.signal("SIGTERM");
        expect(await last.exited).toBe(0);
      } finally {
        pages.disarm();
        await kill(worker);
        await kill(backfill);
        await sandbox.close();
      }
    },
    FULL ? 900_000 : 240_000,
  );

  // The defaults: how long does a takeover take when JOB_LOCK_DURATION_MS is left at 30 s?
  it.runIf(FULL)(
    "with the default JOB_LOCK_DURATION_MS, one SIGKILL mid-write: the replacement resumes on its own and the end is exact",
    async () => {
      const sandbox = await startSandbox({
        seed: 4000 + (seed % 1000),
        billCount: 20_000,
        startMs: START,
        endMs: START + 20 * DAY - 1,
        limits: null,
      });
      const truth = sandbox.truth();
      const account = "crash-defaults";
      const env = workerEnv({
        databaseUrl: database.url,
        redisUrl: redis.url,
        prefix: `${redis.prefix}_defaults`,
        sandboxUrl: sandbox.url,
        account,
        extra: { RATE_LIMIT_IP_WEIGHT: "1000000", RATE_LIMIT_UID_WEIGHT: "1000000" },
      });
      let worker: Proc | undefined;
      let backfill: Proc | undefined;
      try {
        worker = await startWorkerProcess(env);
        const startedAt = new Date();
        backfill = startBackfillProcess(env, truth[0]!.cTimeMs, truth.at(-1)!.cTimeMs, 24);
        while ((await billCount(account)) < truth.length * 0.3) await new Promise((r) => setTimeout(r, 25));
        let active: Awaited<ReturnType<typeof activeBillsWrite>>;
        while (!(active = await activeBillsWrite(startedAt))) await new Promise((r) => setTimeout(r, 2));
        worker.signal("SIGKILL");
        const killedAt = Date.now();
        await worker.exited;
        const billsAtKill = await billCount(account);
        worker = await startWorkerProcess(env);
        const restartedAt = Date.now();
        const waited = await waitForLine(
          worker,
          (l) => l.msg === "bills sync starting" && String(l.stream).startsWith("bills-backfill:"),
          180_000,
          () => false,
        );
        expect(await backfill.exited, backfill.output().slice(-2000)).toBe(0);
        const e = await compareWithTruth(database.url, account, truth);
        report("crash-default-lock", {
          seed,
          bills: truth.length,
          lockDurationMs: "default (30000)",
          billsAtKill,
          writePid: active.pid,
          resumedAfterMs: waited === undefined ? null : restartedAt - killedAt + waited,
          result: describeExactness(e),
        });
        expect(waited).toBeDefined();
        expect(isExact(e), describeExactness(e)).toBe(true);
        worker.signal("SIGTERM");
        expect(await worker.exited).toBe(0);
      } finally {
        await kill(worker);
        await kill(backfill);
        await sandbox.close();
      }
    },
    600_000,
  );
});
