// PostgreSQL connections and outages with real services on loopback (issue 31, "Connections and
// outages"): real worker processes sync a fleet of sandbox accounts into a PostgreSQL server of their
// own (one this file may restart and reconfigure, never the shared test server) while the scenario
// cuts idle connections (HAProxy), terminates every backend of the workers, restarts the server, or
// gives the workers fewer connection slots than their pools add up to. Each ends with every account's
// bills equal to the sandbox's, no two runs of one account and group overlapping, no "too many
// clients" in the workers' logs and no failed job; the seconds to resume after each fault are printed.
// Each scenario is `(o) => Promise<{ ok, line }>`: the vitest tests (test/store/pg-outages.test.ts)
// run the small case, the infrastructure runner the fleet-sized one.
import pg from "pg";
import { generateMasterKeyHex, loadMasterKey } from "../../../src/config/master-key.ts";
import { seal } from "../../../src/config/sealed-credentials.ts";
import { fleetCredentials, fleetUid, startSandbox, type Sandbox } from "../../../src/sandbox/index.ts";
import { insertAccount } from "../../../src/store/accounts/registry.ts";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { createDb } from "../../../src/store/prisma.ts";
import {
  startPrivatePostgres,
  startPrivateRedis,
  type PrivatePostgres,
  type PrivateRedis,
} from "../../faults/support/private-services.ts";
import { logLines, nonLogLines } from "../../faults/support/worker.ts";
import { freePort, startCli, type Proc } from "../processes.ts";
import { billsDifference, overlappingRuns } from "./books.ts";
import { startHaProxy, type HaProxy } from "./haproxy.ts";

export interface ScenarioOptions {
  /** The CI-sized case (seconds), else the fleet-sized one. */
  small: boolean;
  log: (line: string) => void;
}
export interface ScenarioResult {
  ok: boolean;
  /** One summary line. */
  line: string;
}
export type PgOutageScenario = (o: ScenarioOptions) => Promise<ScenarioResult>;

/** The plain role the workers connect as: no superuser, so the reserved slots are not theirs. */
const ROLE = "ledger";
const DATABASE = "ledger";
const SEED = 3131;
/** What the server says when it refuses a connection for want of a slot, in any of its forms. */
const TOO_MANY = new RegExp(
  [
    "too many clients",
    "too many connections",
    "remaining connection slots are reserved",
    "SQLSTATE 53[34]00",
    '"code":"53[34]00"',
    "ConnectionSlotsExhausted",
  ].join("|"),
  "i",
);
/**
 * The bills interval of the fault scenarios: a job that found its account's lease held (by a run the
 * fault cut short, whose lease lapses after RUN_LEASE_MS) is skipped, and the account's next run is
 * the next interval's, as in production (default 60 s).
 */
const RETRY_INTERVAL_MS = 30_000;
const SLOT_WAIT_MESSAGE = "postgres has no connection slot free: waiting for one";
const BUDGET_WARNING = /^DATABASE_POOL_MAX \d+ does not fit/;

interface FleetOptions {
  accounts: number;
  billsPerAccount: number;
  workers: number;
  poolMax: number;
  /** max_connections of the server (its default, 100, unless told). */
  maxConnections?: number;
  /** HAProxy in front, cutting connections idle this many seconds. */
  haproxyIdleSeconds?: number;
  /** Bills requests per second the sandbox and the workers allow (paces the run so faults land in it). */
  requestsPerSecond: number;
  billsIntervalMs?: number;
  log: (line: string) => void;
}

interface Fleet {
  pg: PrivatePostgres;
  redis: PrivateRedis;
  sandbox: Sandbox;
  haproxy: HaProxy | undefined;
  /** The ledger database as the superuser, on the server itself (checks, faults). */
  adminUrl: string;
  names: string[];
  workers: Proc[];
  /** Starts the workers (the budget scenario holds slots first). */
  startWorkers(): Promise<void>;
  /** Total bills stored plus finished ok runs: grows whenever the workers make progress. */
  progress(): Promise<number | undefined>;
  /** Accounts whose bill count equals the sandbox's. */
  completeCount(): Promise<number>;
  close(): Promise<void>;
}

async function adminRows<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const withDb = (url: string, db: string, user?: string) => {
  const u = new URL(url);
  u.pathname = `/${db}`;
  if (user) u.username = user;
  return u.toString();
};

async function startFleet(o: FleetOptions): Promise<Fleet> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  try {
    const server = await startPrivatePostgres();
    cleanups.push(() => server.destroy());
    if (o.maxConnections !== undefined) {
      await adminRows(server.url, `ALTER SYSTEM SET max_connections = ${o.maxConnections}`);
      await server.stop("fast");
      await server.start();
    }
    await adminRows(server.url, `CREATE ROLE ${ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
    await adminRows(server.url, `CREATE DATABASE ${DATABASE} OWNER ${ROLE}`);
    const adminUrl = withDb(server.url, DATABASE);
    await adminRows(adminUrl, `ALTER SCHEMA public OWNER TO ${ROLE}`);
    const ownerUrl = withDb(server.url, DATABASE, ROLE);
    await migrateDeploy(ownerUrl);

    const redis = await startPrivateRedis();
    cleanups.push(() => redis.destroy());
    const days = 6;
    const windowMs = 1000;
    const weight = o.requestsPerSecond * 5;
    const sandbox = await startSandbox({
      seed: SEED,
      fleet: { accounts: o.accounts, billsPerAccount: o.billsPerAccount },
      startMs: Date.now() - days * 86_400_000,
      limits: { ipWeight: weight, uidWeight: weight, windowMs },
      accountEvolution: "manual",
    });
    cleanups.push(() => sandbox.close());
    const masterKeyHex = generateMasterKeyHex();
    const master = loadMasterKey({ LEDGER_SYNC_MASTER_KEY: masterKeyHex })!;
    const names = Array.from({ length: o.accounts }, (_, i) => `o${String(i).padStart(4, "0")}`);
    const db = createDb(ownerUrl, { poolMax: 2 });
    try {
      for (let i = 0; i < o.accounts; i++)
        await insertAccount(db, {
          name: names[i]!,
          uid: fleetUid(SEED, i),
          coinIds: [],
          backfillFromMs: null,
          billsSource: null,
          sealed: seal(master, names[i]!, fleetCredentials(SEED, i)),
        });
    } finally {
      await db.$disconnect();
    }

    const haproxy =
      o.haproxyIdleSeconds === undefined ? undefined : await startHaProxy(server.port, o.haproxyIdleSeconds);
    if (haproxy) cleanups.push(() => haproxy.stop());
    const workerUrl = new URL(haproxy ? ownerUrl.replace(`:${server.port}/`, `:${haproxy.port}/`) : ownerUrl);
    const env: Record<string, string> = {
      DATABASE_URL: workerUrl.toString(),
      REDIS_URL: redis.url,
      QUEUE_PREFIX: "ls",
      EXCHANGE_BASE_URL: sandbox.url,
      LEDGER_SYNC_MASTER_KEY: masterKeyHex,
      BACKFILL_FROM: String(Date.now() - days * 86_400_000),
      RATE_LIMIT_IP_WEIGHT: String(weight),
      RATE_LIMIT_UID_WEIGHT: String(weight),
      RATE_LIMIT_WINDOW_MS: String(windowMs),
      BILLS_INTERVAL_MS: String(o.billsIntervalMs ?? 3_600_000),
      SNAPSHOT_INTERVAL_MS: "3600000",
      DATABASE_POOL_MAX: String(o.poolMax),
      SYNC_RESWEEP_HOURS: "0",
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
      SHUTDOWN_TIMEOUT_MS: "5000",
    };
    const workers: Proc[] = [];
    cleanups.push(async () => {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.signal("SIGKILL");
      await Promise.all(workers.map((w) => w.exited));
    });
    const total = () => names.length;
    return {
      pg: server,
      redis,
      sandbox,
      haproxy,
      adminUrl,
      names,
      workers,
      startWorkers: async () => {
        for (let i = 0; i < o.workers; i++)
          workers.push(startCli(["worker"], { ...env, METRICS_PORT: String(await freePort()) }));
        o.log(`${o.workers} workers started (DATABASE_POOL_MAX ${o.poolMax}) for ${total()} accounts`);
      },
      progress: async () => {
        try {
          const [r] = await adminRows<{ n: string }>(
            adminUrl,
            `SELECT (SELECT count(*) FROM bills) + (SELECT count(*) FROM sync_runs WHERE outcome = 'ok') AS n`,
          );
          return Number(r!.n);
        } catch {
          return undefined;
        }
      },
      completeCount: async () => {
        const counts = new Map(
          (
            await adminRows<{ a: string; n: number }>(
              adminUrl,
              "SELECT account_name AS a, count(*)::int AS n FROM bills GROUP BY 1",
            )
          ).map((r) => [r.a, r.n]),
        );
        return names.filter((n, i) => counts.get(n) === sandbox.fleet!.bills(i).length).length;
      },
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` is true; throws naming `what` after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Seconds from `since` until the fleet's progress passes `from` (undefined if it does not within the bound). */
async function resumeSeconds(f: Fleet, from: number, since: number, timeoutMs = 120_000): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const p = await f.progress();
    if (p !== undefined && p > from) return (Date.now() - since) / 1000;
    await sleep(100);
  }
  return undefined;
}

/** Progress now, retried through a restart. */
async function progressNow(f: Fleet): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const p = await f.progress();
    if (p !== undefined) return p;
    await sleep(100);
  }
  throw new Error("cannot read the fleet's progress");
}

interface Verdict {
  complete: number;
  exact: boolean;
  overlaps: number;
  tooMany: number;
  failedJobs: number;
  slotWaits: number;
  budgetWarnings: number;
  problems: string[];
}

/** Waits for every account to complete, stops the workers, and checks the books and the logs. */
async function verdict(f: Fleet, timeoutMs: number, log: (line: string) => void): Promise<Verdict> {
  const problems: string[] = [];
  let complete = 0;
  try {
    await until(
      "every account's bills",
      async () => (complete = await f.completeCount()) === f.names.length,
      timeoutMs,
      500,
    );
  } catch (err) {
    problems.push((err as Error).message);
  }
  complete = await f.completeCount();
  if (complete < f.names.length) await explainIncomplete(f, log);
  for (const w of f.workers) w.signal("SIGTERM");
  const codes = await Promise.all(f.workers.map((w) => w.exited));
  codes.forEach((c, i) => {
    if (c === 0) return;
    problems.push(`worker ${i} exited ${c}`);
    // Its last log line and what it printed outside the log (a crash's stack).
    const out = f.workers[i]!.output().split("\n");
    const tail = [
      ...logLines(out.join("\n"))
        .slice(-1)
        .map((l) => JSON.stringify(l)),
      ...nonLogLines(out.join("\n")),
    ].slice(-30);
    for (const l of tail) log(`  worker ${i}: ${l.slice(0, 600)}`);
  });
  let exact = true;
  for (let i = 0; i < f.names.length; i++) {
    const diff = await billsDifference(f.adminUrl, f.names[i]!, f.sandbox.fleet!.bills(i));
    if (diff) {
      exact = false;
      if (problems.length < 10) problems.push(diff);
    }
  }
  const overlaps = await overlappingRuns(f.adminUrl);
  for (const o of overlaps.slice(0, 3)) problems.push(`overlap ${o.account} ${o.group}: ${o.runs}`);
  let tooMany = 0;
  let failedJobs = 0;
  let slotWaits = 0;
  let budgetWarnings = 0;
  f.workers.forEach((w, i) => {
    const out = w.output();
    // The worker's own one-line notice of a wait names the SQLSTATE; it is the feature, not a failure.
    const bad = out.split("\n").filter((l) => TOO_MANY.test(l) && !l.includes(SLOT_WAIT_MESSAGE));
    tooMany += bad.length;
    for (const l of bad.slice(0, 2)) problems.push(`worker ${i}: ${l.slice(0, 300)}`);
    const lines = logLines(out);
    const failed = lines.filter((l) => l.msg.startsWith("job failed"));
    failedJobs += failed.length;
    for (const l of failed.slice(0, 2)) problems.push(`worker ${i} job failed: ${JSON.stringify(l.err).slice(0, 400)}`);
    slotWaits += lines.filter((l) => l.msg.startsWith(SLOT_WAIT_MESSAGE)).length;
    const budget = lines.filter((l) => BUDGET_WARNING.test(l.msg));
    budgetWarnings += budget.length;
    if (budget[0]) log(`worker ${i} at start: ${budget[0].msg.slice(0, 200)}…`);
  });
  return { complete, exact, overlaps: overlaps.length, tooMany, failedJobs, slotWaits, budgetWarnings, problems };
}

/** For the accounts left incomplete: their runs, leases and the workers' last lines about them. */
async function explainIncomplete(f: Fleet, log: (line: string) => void): Promise<void> {
  const counts = new Map(
    (
      await adminRows<{ a: string; n: number }>(
        f.adminUrl,
        "SELECT account_name AS a, count(*)::int AS n FROM bills GROUP BY 1",
      )
    ).map((r) => [r.a, r.n]),
  );
  const incomplete = f.names.filter((n, i) => counts.get(n) !== f.sandbox.fleet!.bills(i).length).slice(0, 3);
  for (const name of incomplete) {
    const runs = await adminRows<{ r: string }>(
      f.adminUrl,
      `SELECT format('%s %s %s..%s %s %s', id, stream, started_at, finished_at, outcome, left(error, 120)) AS r
       FROM sync_runs WHERE account_name = $1 ORDER BY id`,
      [name],
    );
    const leases = await adminRows<{ r: string }>(
      f.adminUrl,
      "SELECT row_to_json(l)::text AS r FROM run_leases l WHERE account_name = $1",
      [name],
    );
    log(
      `incomplete ${name}: runs ${runs.map((r) => r.r).join(" | ") || "none"}; leases ${leases.map((r) => r.r).join(" | ")}`,
    );
    f.workers.forEach((w, i) => {
      const about = logLines(w.output()).filter((l) => JSON.stringify(l).includes(`"${name}"`));
      for (const l of about.slice(-6)) log(`  worker ${i}: ${JSON.stringify(l).slice(0, 400)}`);
    });
  }
}

function summary(name: string, f: Fleet, v: Verdict, resumed: (number | undefined)[], extra = ""): string {
  const seen = resumed.filter((s): s is number => s !== undefined);
  const r =
    resumed.length === 0
      ? ""
      : seen.length === 1 && resumed.length === 1
        ? `, resumed in ${seen[0]!.toFixed(1)} s`
        : `, resumed in ${seen.length ? `${Math.min(...seen).toFixed(1)}-${Math.max(...seen).toFixed(1)} s` : "-"}` +
          ` (${seen.length}/${resumed.length} faults)`;
  return (
    `${name}: accounts ${v.complete}/${f.names.length} complete, bills ${v.exact ? "exact" : "NOT exact"}, ` +
    `overlaps ${v.overlaps}, too-many-clients ${v.tooMany}, failed jobs ${v.failedJobs}${extra}${r}`
  );
}

const passed = (v: Verdict, f: Fleet) =>
  v.complete === f.names.length && v.exact && v.overlaps === 0 && v.tooMany === 0 && v.failedJobs === 0;

async function run(
  name: string,
  o: ScenarioOptions,
  fleet: Omit<FleetOptions, "log">,
  body: (
    f: Fleet,
  ) => Promise<{ resumed: (number | undefined)[]; extra?: (v: Verdict) => string; ok?: (v: Verdict) => boolean }>,
): Promise<ScenarioResult> {
  const f = await startFleet({ ...fleet, log: o.log });
  try {
    const b = await body(f);
    const v = await verdict(f, o.small ? 90_000 : 900_000, o.log);
    for (const p of v.problems) o.log(`${name}: ${p}`);
    const ok = passed(v, f) && v.problems.length === 0 && (b.ok?.(v) ?? true);
    return { ok, line: summary(name, f, v, b.resumed, b.extra?.(v) ?? "") };
  } catch (err) {
    for (const [i, w] of f.workers.entries()) o.log(`${name}: worker ${i} output tail: ${w.output().slice(-1500)}`);
    return { ok: false, line: `${name}: failed: ${(err as Error).message}` };
  } finally {
    await f.close();
  }
}

/** Waits until the fleet has done `fraction` of its bills (work is under way, far from done). */
async function reached(f: Fleet, fraction: number, timeoutMs = 120_000): Promise<void> {
  const totalBills = f.names.reduce((s, _, i) => s + f.sandbox.fleet!.bills(i).length, 0);
  await until(
    `${Math.round(fraction * 100)}% of the bills stored`,
    async () => {
      const [r] = await adminRows<{ n: string }>(f.adminUrl, "SELECT count(*) AS n FROM bills");
      return Number(r!.n) >= fraction * totalBills;
    },
    timeoutMs,
    100,
  );
}

/**
 * HAProxy in TCP mode between the workers and PostgreSQL cuts every connection idle for its timeout
 * (20 s, a cloud load balancer's kind of figure; 5 s in the small case, so that the pool's idle
 * connections, which it closes itself after 10 s, are cut too). After the first sync the fleet sits
 * idle past the timeout, then new bills appear: every account gets them.
 */
export const haproxyIdleCut: PgOutageScenario = (o) => {
  const idle = o.small ? 5 : 20;
  const accounts = o.small ? 20 : 300;
  return run(
    `haproxy idle cut ${idle} s`,
    o,
    {
      accounts,
      billsPerAccount: o.small ? 40 : 60,
      workers: o.small ? 2 : 4,
      poolMax: o.small ? 4 : 10,
      haproxyIdleSeconds: idle,
      requestsPerSecond: 40,
      billsIntervalMs: (idle + 6) * 1000,
    },
    async (f) => {
      await f.startWorkers();
      await until("the first sync of every account", async () => (await f.completeCount()) === accounts, 600_000, 500);
      // Idle past the cut: only the scheduler's tick keeps one connection busy.
      await sleep((idle + 4) * 1000);
      const before = f.haproxy!.idleCuts();
      const appendedAt = Date.now();
      for (let i = 0; i < accounts; i++) f.sandbox.appendFleetBills(i, 2);
      await until("the new bills", async () => (await f.completeCount()) === accounts, 600_000, 250);
      const caughtUp = (Date.now() - appendedAt) / 1000;
      const cuts = f.haproxy!.idleCuts();
      o.log(`haproxy: ${cuts} of ${f.haproxy!.sessions()} sessions cut idle (${before} before the new bills)`);
      return {
        resumed: [],
        extra: () => `, idle cuts ${cuts}, new bills stored in ${caughtUp.toFixed(1)} s (bills interval ${idle + 6} s)`,
        // The small case must have cut connections, or it proved nothing about cuts.
        ok: () => !o.small || cuts > 0,
      };
    },
  );
};

/** The fleet of the fault scenarios (terminate, restart): CI's 20 accounts, or the issue's 300. */
const faultFleet = (o: ScenarioOptions) => ({
  accounts: o.small ? 20 : 300,
  billsPerAccount: 150,
  workers: o.small ? 2 : 4,
  poolMax: o.small ? 4 : 10,
  requestsPerSecond: o.small ? 15 : 60,
  billsIntervalMs: RETRY_INTERVAL_MS,
});

/** pg_terminate_backend of every backend of the workers' role (pool and lease connections), repeatedly, mid-sync. */
export const terminateBackends: PgOutageScenario = (o) => {
  const rounds = o.small ? 4 : 12;
  return run(`pg_terminate_backend x${rounds}`, o, faultFleet(o), async (f) => {
    await f.startWorkers();
    const resumed: (number | undefined)[] = [];
    let killed = 0;
    for (let k = 0; k < rounds; k++) {
      await reached(f, (0.5 * (k + 1)) / (rounds + 1));
      const rows = await adminRows<{ n: string }>(
        f.adminUrl,
        `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n
           FROM pg_stat_activity
           WHERE usename = $1 AND pid <> pg_backend_pid()`,
        [ROLE],
      );
      const at = Date.now();
      killed += Number(rows[0]!.n);
      // Progress counted from the fault on: what committed before it does not count as resuming.
      resumed.push(await resumeSeconds(f, await progressNow(f), at));
    }
    o.log(`terminated ${killed} backends in ${rounds} rounds`);
    return { resumed, extra: () => `, backends terminated ${killed}`, ok: () => killed > 0 };
  });
};

/** `pg_ctl restart -m fast` (every connection cut, the server down for the restart) during the backfill. */
export const postgresRestart: PgOutageScenario = (o) => {
  const restarts = o.small ? 1 : 3;
  return run(`postgres restart x${restarts}`, o, faultFleet(o), async (f) => {
    await f.startWorkers();
    const resumed: (number | undefined)[] = [];
    for (let k = 0; k < restarts; k++) {
      await reached(f, (0.6 * (k + 1)) / (restarts + 1));
      await f.pg.stop("fast");
      await f.pg.start();
      const up = Date.now();
      resumed.push(await resumeSeconds(f, await progressNow(f), up));
    }
    return { resumed };
  });
};

/**
 * Fewer connection slots than the workers' pools add up to: max_connections 40 (37 for a plain role)
 * for 4 workers of DATABASE_POOL_MAX 10 and 300 accounts; small: 12 (9) for 2 x 6 and 20 accounts.
 * At start another client of the role holds all slots but one for a few seconds, so every worker
 * meets a full server. Work waits for slots; nothing is refused as too many.
 */
export const connectionBudget: PgOutageScenario = (o) => {
  const maxConnections = o.small ? 12 : 40;
  const workers = o.small ? 2 : 4;
  const poolMax = o.small ? 6 : 10;
  return run(
    `max_connections ${maxConnections}, ${workers} workers x DATABASE_POOL_MAX ${poolMax}`,
    o,
    {
      accounts: o.small ? 20 : 300,
      billsPerAccount: 60,
      workers,
      poolMax,
      maxConnections,
      requestsPerSecond: o.small ? 40 : 120,
    },
    async (f) => {
      const ownerUrl = withDb(f.adminUrl, DATABASE, ROLE);
      const usable = maxConnections - 3;
      const hog: pg.Client[] = [];
      for (let i = 0; i < usable - 1; i++) {
        const c = new pg.Client({ connectionString: ownerUrl });
        c.on("error", () => undefined);
        await c.connect();
        hog.push(c);
      }
      await f.startWorkers();
      // Until a worker has been refused (its one warning), the slots stay taken: bounded, named.
      await until(
        "a worker to be refused a connection slot",
        async () => f.workers.some((w) => w.output().includes(SLOT_WAIT_MESSAGE)),
        60_000,
        100,
      );
      const from = await progressNow(f);
      await Promise.all(hog.map((c) => c.end()));
      const released = Date.now();
      const resumed = [await resumeSeconds(f, from, released)];
      let peak = 0;
      const watch = setInterval(() => {
        void adminRows<{ n: number }>(
          f.adminUrl,
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1",
          [ROLE],
        ).then(
          ([r]) => (peak = Math.max(peak, r!.n)),
          () => undefined,
        );
      }, 200);
      try {
        await until("every account's bills", async () => (await f.completeCount()) === f.names.length, 900_000, 500);
      } finally {
        clearInterval(watch);
      }
      return {
        resumed,
        extra: (v) =>
          `, slot-wait warnings ${v.slotWaits}, start-up budget warnings ${v.budgetWarnings}, ` +
          `peak connections ${peak}/${usable}`,
        ok: (v) => v.slotWaits > 0,
      };
    },
  );
};

/** Every scenario of this file, by the name the runner shows. */
export const pgOutageScenarios: Record<string, PgOutageScenario> = {
  "haproxy-idle-cut": haproxyIdleCut,
  "pg-terminate-backend": terminateBackends,
  "postgres-restart": postgresRestart,
  "connection-budget": connectionBudget,
};
