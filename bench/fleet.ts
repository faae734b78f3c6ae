// The fleet benchmark (issue 25): many accounts synced by real `ledger-sync worker` processes from
// the accounts table, against the fleet sandbox with the exchange's limits, new bills arriving all
// the while. Scenarios:
//   1k        N accounts (1,000) on one egress IP, one worker
//   backfill  the same, plus one account with 90 days of dense history added while it runs
//   10k       N accounts (10,000) over W workers (10), each its own EGRESS_LOCAL_ADDRESS and EGRESS_ID
//   faults    N accounts (1,000) over 4 workers on one IP: SIGKILL of one, Redis and PostgreSQL restarts
//   npm run bench -- --only fleet --scenario 1k [--small] [--accounts N] [--workers W] [--duration S] [--json]
//   npm run bench -- --only fleet-10k --accounts 3000 --workers 3
// Figures only (nothing asserted); printed, not written to docs/benchmarks.md (docs/design/fleet-bench.md
// records them). Traffic stays on loopback; every wait is bounded; everything started is stopped.
import { execFileSync } from "node:child_process";
import os from "node:os";
import { createInterface } from "node:readline";
import { Command, InvalidArgumentError } from "commander";
import type pg from "pg";
import { freePort } from "../src/local-services/free-port.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, type SandboxBill } from "../src/sandbox/index.ts";
import { distIsCurrent } from "../scripts/dist.js";
import { Cleanup, runScope } from "./cleanup.ts";
import { startCli, type CliProcess } from "./cli-process.ts";
import type { FleetHostStats } from "./fleet-sandbox-host.ts";
import { startFleetSandbox, type FleetSandbox } from "./fleet-sandbox.ts";
import {
  benchPool,
  ConnectionSampler,
  fleetDatabase,
  fleetName,
  fleetRedis,
  redisInfo,
  redisKeyBreakdown,
  registerFleet,
  RssWatch,
  type FleetDatabase,
} from "./fleet-services.ts";
import { machineLine } from "./machine.ts";
import { cpuSeconds, machineCpu } from "./proc-stats.ts";
import { int, mb, printSection, type Row, type Section } from "./report.ts";

export const FLEET_ITEMS = ["fleet", "fleet-1k", "fleet-backfill", "fleet-10k", "fleet-faults"] as const;
export const SCENARIOS = ["1k", "backfill", "10k", "faults"] as const;
export type Scenario = (typeof SCENARIOS)[number];

const DAY = 86_400_000;
const SEED = 25;
const POOL_MAX = 10;
const IP_BUDGET = 500;
const UID_BUDGET = 500;
const WINDOW_MS = 10_000;
const BACKFILL_ACCOUNT = "bf";

// ---------------------------------------------------------------------------------------------
// Command line

export interface FleetArgs {
  scenarios: Scenario[];
  small: boolean;
  json: boolean;
  accounts?: number;
  workers?: number;
  durationS?: number;
  warmupMaxS?: number;
  billsPerAccount: number;
  historyHours: number;
  liveBillsPerMinute?: number;
  backfillBills?: number;
  billsIntervalMs: number;
  snapshotIntervalMs: number;
}

export const FLEET_USAGE = `npm run bench -- --only fleet[,fleet-1k,fleet-backfill,fleet-10k,fleet-faults] [options]
  --scenario 1k,backfill,10k,faults   (with --only fleet; default all four)
  --small                             100 accounts (10k: 1,000), shorter runs
  --accounts N --workers W            N accounts (1k/backfill/faults 1,000, 10k 10,000), W workers (1, 1, 4, 10)
  --duration S                        measured seconds after the warm-up (default 360; --small 150, backfill 240)
  --warmup-max S                      longest wait for every account's first sync (default 900)
  --bills-per-account B               history per account (default 20)
  --history-hours H                   span of the fleet's history and BACKFILL_FROM (default 2160: 90 days)
  --live-bills-per-minute R           new bills over the fleet (default N / 5)
  --backfill-bills B                  backfill scenario: the added account's 90 days (default 200,000; --small 20,000)
  --bills-interval-ms --snapshot-interval-ms   (default 60000, 300000)
  --json                              also print each scenario's figures as JSON`;

function positive(flag: string, text: string): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n <= 0)
    throw new InvalidArgumentError(`${flag} must be a positive whole number`);
  return n;
}

/** The --only values of the command line (either form), or undefined without --only. */
function onlyItems(argv: string[]): string[] | undefined {
  const items: string[] = [];
  let seen = false;
  argv.forEach((a, i) => {
    const v = a === "--only" ? argv[i + 1] : a.startsWith("--only=") ? a.slice(7) : undefined;
    if (v === undefined) return;
    seen = true;
    items.push(...v.split(",").filter(Boolean));
  });
  return seen ? items : undefined;
}

/** Whether the command line asks for fleet items (bench/run.ts hands it to runFleet then). */
export function isFleetRun(argv: string[]): boolean {
  return (onlyItems(argv) ?? []).some((x) => x.startsWith("fleet"));
}

export function parseFleetArgs(argv: string[]): FleetArgs {
  const items = onlyItems(argv) ?? [];
  const other = items.filter((x) => !(FLEET_ITEMS as readonly string[]).includes(x));
  if (other.length > 0)
    throw new Error(`--only: run fleet items on their own (not with ${other.join(", ")})\n${FLEET_USAGE}`);
  const program = new Command("bench")
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined })
    .option("--only <items>", "fleet items")
    .option("--scenario <list>", "scenarios", (v: string) => {
      const list = v.split(",").filter(Boolean);
      const bad = list.filter((x) => !(SCENARIOS as readonly string[]).includes(x));
      if (list.length === 0 || bad.length > 0)
        throw new InvalidArgumentError(`--scenario takes a comma-separated list of ${SCENARIOS.join(", ")}`);
      return list as Scenario[];
    })
    .option("--small", "small sizes")
    .option("--no-doc", "accepted; the fleet items only print")
    .option("--json", "print JSON too");
  const numeric: Record<string, string> = {
    "--accounts": "accounts",
    "--workers": "workers",
    "--duration": "duration",
    "--warmup-max": "warmupMax",
    "--bills-per-account": "billsPerAccount",
    "--history-hours": "historyHours",
    "--live-bills-per-minute": "liveBillsPerMinute",
    "--backfill-bills": "backfillBills",
    "--bills-interval-ms": "billsIntervalMs",
    "--snapshot-interval-ms": "snapshotIntervalMs",
  };
  for (const [flag, key] of Object.entries(numeric))
    program.option(`${flag} <n>`, key, (v: string) => positive(flag, v));
  try {
    program.parse(argv, { from: "user" });
  } catch (err) {
    throw new Error(`${(err as Error).message.replace(/^error: /, "")}\n${FLEET_USAGE}`);
  }
  const o = program.opts<Record<string, unknown>>();
  const fromItems = items.flatMap((x) => (x === "fleet" ? [] : [x.slice("fleet-".length) as Scenario]));
  const scenarios = items.includes("fleet")
    ? ((o.scenario as Scenario[] | undefined) ?? [...SCENARIOS])
    : SCENARIOS.filter((s) => fromItems.includes(s));
  const n = (k: string) => o[k] as number | undefined;
  return {
    scenarios,
    small: o.small === true,
    json: o.json === true,
    accounts: n("accounts"),
    workers: n("workers"),
    durationS: n("duration"),
    warmupMaxS: n("warmupMax"),
    billsPerAccount: n("billsPerAccount") ?? 20,
    historyHours: n("historyHours") ?? 90 * 24,
    liveBillsPerMinute: n("liveBillsPerMinute"),
    backfillBills: n("backfillBills"),
    billsIntervalMs: n("billsIntervalMs") ?? 60_000,
    snapshotIntervalMs: n("snapshotIntervalMs") ?? 300_000,
  };
}

// ---------------------------------------------------------------------------------------------
// Plans

interface Plan {
  scenario: Scenario;
  accounts: number;
  workers: number;
  /** Each worker its own EGRESS_LOCAL_ADDRESS 127.0.0.(2+k) and EGRESS_ID egress-(2+k). */
  addressPerWorker: boolean;
  durationMs: number;
  warmupMaxMs: number;
  billsPerAccount: number;
  /** Span of the fleet accounts' history, and of BACKFILL_FROM. */
  historyMs: number;
  liveBillsPerMinute: number;
  /** backfill: the added account's bills; 0 otherwise. */
  backfillBills: number;
  faults: boolean;
  billsIntervalMs: number;
  snapshotIntervalMs: number;
}

function planOf(scenario: Scenario, a: FleetArgs): Plan {
  const big = scenario === "10k";
  const accounts = a.accounts ?? (big ? (a.small ? 1000 : 10_000) : a.small ? 100 : 1000);
  const i = a.billsIntervalMs;
  return {
    scenario,
    accounts,
    workers: a.workers ?? { "1k": 1, backfill: 1, "10k": 10, faults: 4 }[scenario],
    addressPerWorker: big,
    durationMs:
      1000 *
      (a.durationS ??
        (scenario === "backfill" ? (a.small ? 240 : 360) : scenario === "faults" ? 0 : a.small ? 150 : 360)),
    warmupMaxMs: 1000 * (a.warmupMaxS ?? 900),
    billsPerAccount: a.billsPerAccount,
    historyMs: a.historyHours * 3_600_000,
    liveBillsPerMinute: a.liveBillsPerMinute ?? Math.max(1, Math.round(accounts / 5)),
    backfillBills: scenario === "backfill" ? (a.backfillBills ?? (a.small ? 20_000 : 200_000)) : 0,
    faults: scenario === "faults",
    billsIntervalMs: i,
    snapshotIntervalMs: a.snapshotIntervalMs,
  };
}

/** The faults, in bills intervals after the warm-up; the run ends 4 intervals after the last recovery. */
const FAULT_SCHEDULE = { killWorker: 1, restartRedis: 2, restartPostgres: 3, after: 4 };
const OUTAGE_MS = 5000;

// ---------------------------------------------------------------------------------------------
// A run

interface Latencies {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

interface FaultRecord {
  name: string;
  atMs: number;
  /** When it struck, seconds into the measured part. */
  atSeconds: number;
  recoveredMs: number;
  /** Per account: longest stretch without a successful bills run from the recovery to the end (ms). */
  maxGapMs: number;
  p99GapMs: number;
  /** Accounts whose longest stretch after the recovery exceeded 3 intervals. */
  staleOver3: number;
  /** Time from the recovery until the last account's first successful bills run after it (ms). */
  allSyncedAfterMs: number;
  freshnessAfter: Latencies;
}

export interface FleetResult {
  plan: Plan;
  runsSourcesThroughTsx: boolean;
  /** The commit the workers ran (`+` when the tree had changes). */
  revision: string;
  registerSeconds: number;
  workersStartSeconds: number;
  warmup: { reached: boolean; seconds: number; accountsSynced: number };
  measuredSeconds: number;
  exact: { accounts: number; of: number; mismatched: string[]; spotChecked: number; spotIdentical: number };
  quarantined: number;
  /** Row writes on bills over the run (pg_stat_user_tables) and the revisions filed (bill_revisions). */
  billWrites: { inserted: number; updated: number; revisions: number };
  freshness: {
    steady: Latencies;
    warmup: Latencies;
    appendedTotal: number;
    notStoredAtEnd: number;
    notStoredAfterDrain: number;
    drainSeconds: number;
  };
  staleness: { p50: number; p99: number; max: number; never: number };
  rateLimited: { total: number; steady: number };
  ipPeak: {
    sandboxMax: number;
    byAddress: Record<
      string,
      { run: number; steady: number; requests: number; steadyP50: number; steadyP99: number; steadyOver90: number }
    >;
  };
  workerPeakRssBytes: number;
  redis: {
    beforeBytes: number;
    warmBytes: number;
    endBytes: number;
    perAccountBytes: number;
    peakBytes: number;
    /** At the end: key shape, keys, MEMORY USAGE bytes; largest first. */
    byKeyShape: [string, number, number][];
  };
  pgConnections: { peakPerWorker: number; peakTotal: number; byName: Record<string, number> };
  requests: {
    ledgerPerAccountPerInterval: number;
    accountPerAccountPerSnapshotInterval: number;
    connectionsAccepted: number;
    requestsTotal: number;
  };
  /** Scheduled bills runs of the fleet within the measured part: sync_runs.pages (requests). */
  billsRuns: { runs: number; pagesPerRun: number; maxPages: number; runsOverOnePage: number };
  runsByOutcome: Record<string, number>;
  /** The commonest reasons of failed runs (sync_runs.error, numbers masked). */
  failedRuns: [stream: string, error: string, runs: number][];
  /** Every bills sync of the run by stream, from the workers' "bills sync finished" lines. */
  syncs: Record<string, SyncTally>;
  /** Warnings and errors of the workers' logs, and how often each distinct message came (up to 30 kinds). */
  workerLog: { errors: number; warnings: number; messages: Record<string, number> };
  cpu: { workers: number; sandbox: number; machineBusyShare: number; seconds: number };
  backfill?: {
    addedAfterSeconds: number;
    bills: number;
    stored: number;
    doneSeconds: number | null;
    exact: boolean | null;
    progress: [seconds: number, stored: number][];
    othersDuring: Latencies;
  };
  faults?: FaultRecord[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function latencies(values: number[]): Latencies {
  const s = [...values].sort((a, b) => a - b);
  const q = (p: number) => {
    if (s.length === 0) return NaN;
    const i = (s.length - 1) * p;
    const lo = Math.floor(i);
    const hi = Math.ceil(i);
    return s[lo]! + (s[hi]! - s[lo]!) * (i - lo);
  };
  return { count: s.length, p50: q(0.5), p99: q(0.99), max: s.at(-1) ?? NaN };
}

/** The stored rows' digest per account, bills up to the account's cutoff id (fleet-sandbox-host.ts billLine). */
// A bill of no contract: NULL in bills.symbol (issue 26), "" in the sandbox's bills (SandboxBill).
const STORED_DIGEST = `
  SELECT c.n AS account, count(b.bill_id)::int AS count,
         md5(coalesce(string_agg(concat_ws('|', b.bill_id, b.coin, coalesce(b.symbol, ''), b.business_type, b.amount::text,
             b.balance::text, b.fill_fee::text, b.created_at_ms::text), E'\\n'
             ORDER BY b.created_at_ms, b.bill_id::numeric), '')) AS digest
  FROM unnest($1::text[], $2::numeric[]) AS c(n, last)
  LEFT JOIN bills b ON b.account_name = c.n AND b.bill_id::numeric <= c.last AND b.created_at_ms >= $3
  GROUP BY c.n`;

const STORED_ROWS = `
  SELECT bill_id AS "billId", coin, coalesce(symbol, '') AS symbol, business_type AS "businessType", amount::text AS amount,
         balance::text AS balance, fill_fee::text AS "fillFee", created_at_ms::float8 AS "cTimeMs"
  FROM bills WHERE account_name = $1 AND bill_id::numeric <= $2::numeric AND created_at_ms >= $3
  ORDER BY created_at_ms, bill_id::numeric`;

/** When each appended bill was first stored (epoch ms), by its index in the list; absent: not stored. */
async function firstSeen(pool: pg.Pool, appended: [number, string, number][]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (let from = 0; from < appended.length; from += 20_000) {
    const part = appended.slice(from, from + 20_000);
    const { rows } = await pool.query<{ i: string; ms: number }>(
      `SELECT a.i, (extract(epoch FROM b.first_seen_at) * 1000)::float8 AS ms
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS a(n, id, i)
       JOIN bills b ON b.account_name = a.n AND b.bill_id = a.id`,
      [part.map((p) => fleetName(p[0])), part.map((p) => p[1])],
    );
    for (const r of rows) out.set(from + Number(r.i) - 1, r.ms);
  }
  return out;
}

/** Successful bills runs' finish times per account since `sinceMs`. */
async function runsSince(pool: pg.Pool, sinceMs: number): Promise<Map<string, number[]>> {
  const { rows } = await pool.query<{ a: string; t: number[] }>(
    `SELECT account_name AS a, array_agg((extract(epoch FROM finished_at) * 1000)::float8 ORDER BY finished_at) AS t
     FROM sync_runs WHERE stream = 'bills' AND outcome = 'ok' AND finished_at >= to_timestamp($1::float8 / 1000)
     GROUP BY 1`,
    [sinceMs],
  );
  return new Map(rows.map((r) => [r.a, r.t.map(Number)]));
}

interface WorkerProc {
  cli: CliProcess;
  index: number;
  log: { errors: number; warnings: number; messages: Map<string, number> };
  /** Per stream, from the "bills sync finished" lines: runs, requests, hedges, requests called off. */
  syncs: Map<string, SyncTally>;
}

interface SyncTally {
  runs: number;
  requests: number;
  hedged: number;
  calledOff: number;
}

export async function runFleetScenario(plan: Plan): Promise<FleetResult> {
  const scope = new Cleanup();
  const progress = (line: string) => process.stderr.write(`fleet ${plan.scenario}: ${line}\n`);
  try {
    const intervalMs = plan.billsIntervalMs;
    const redis = await fleetRedis(scope);
    const database: FleetDatabase = await fleetDatabase(scope, { private: plan.faults });
    const pool = benchPool(database.url, scope);
    const endMs = Date.now();
    // The fleet's history spans --history-hours (BACKFILL_FROM is its start); the backfill
    // scenario's added account has 90 days, and the sandbox one span for all its accounts.
    const startMs = endMs - (plan.backfillBills > 0 ? Math.max(plan.historyMs, 90 * DAY) : plan.historyMs);
    const fleetFromMs = endMs - plan.historyMs;
    const sandbox: FleetSandbox = await startFleetSandbox(
      {
        seed: SEED,
        // The primary account: the backfill scenario's 90 days of dense history, else a token one.
        billCount: plan.backfillBills > 0 ? plan.backfillBills : 200,
        startMs,
        endMs,
        limits: { ipWeight: IP_BUDGET, uidWeight: UID_BUDGET, windowMs: WINDOW_MS },
        fleet: {
          accounts: plan.accounts,
          billsPerAccount: plan.billsPerAccount,
          liveBillsPerMinute: plan.liveBillsPerMinute,
        },
      },
      scope,
    );
    let t = Date.now();
    const masterKeyHex = await registerFleet(database.url, { seed: SEED, accounts: plan.accounts, coinIds: ["2"] });
    const registerSeconds = (Date.now() - t) / 1000;
    progress(`${int(plan.accounts)} accounts registered in ${registerSeconds.toFixed(1)} s`);
    const redisBefore = (await redisInfo(redis.url, "memory")).used_memory ?? 0;

    const baseEnv = (k: number, applicationName = `bench-worker-${k + 1}`): Record<string, string> => {
      const url = new URL(database.url);
      url.searchParams.set("application_name", applicationName);
      return {
        DATABASE_URL: url.toString(),
        REDIS_URL: redis.url,
        QUEUE_PREFIX: "ls-fleet",
        EXCHANGE_BASE_URL: sandbox.url,
        LEDGER_SYNC_MASTER_KEY: masterKeyHex,
        BACKFILL_FROM: String(fleetFromMs),
        BILLS_INTERVAL_MS: String(intervalMs),
        SNAPSHOT_INTERVAL_MS: String(plan.snapshotIntervalMs),
        DATABASE_POOL_MAX: String(POOL_MAX),
        RATE_LIMIT_IP_WEIGHT: String(IP_BUDGET),
        RATE_LIMIT_UID_WEIGHT: String(UID_BUDGET),
        RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
        ...(plan.addressPerWorker
          ? { EGRESS_LOCAL_ADDRESS: `127.0.0.${2 + k}`, EGRESS_ID: `egress-${2 + k}` }
          : { EGRESS_ID: "bench-egress" }),
        LOG_LEVEL: "info",
        LOG_FORMAT: "json",
        SHUTDOWN_TIMEOUT_MS: "10000",
      };
    };
    t = Date.now();
    const workers: WorkerProc[] = [];
    const killed = new Set<number>();
    for (let k = 0; k < plan.workers; k++) {
      const cli = startCli(
        ["worker"],
        { ...baseEnv(k), METRICS_PORT: String(await freePort()) },
        scope,
        `worker ${k + 1}`,
      );
      const w: WorkerProc = { cli, index: k, log: { errors: 0, warnings: 0, messages: new Map() }, syncs: new Map() };
      createInterface({ input: cli.child.stderr! }).on("line", (line) => {
        if (line.includes('"bills sync finished"')) tallySync(w.syncs, line);
        const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
        if (level < 40) return;
        if (level === 40) w.log.warnings++;
        else w.log.errors++;
        const text = /"msg":"([^"]*)"/.exec(line)?.[1] ?? "";
        const err = /"(?:err|reason|message)":"([^"]{0,100})/.exec(line)?.[1] ?? "";
        const msg = `${level === 40 ? "warn" : "error"}: ${text}${err ? ` (${err})` : ""}`;
        if (w.log.messages.has(msg) || w.log.messages.size < 30)
          w.log.messages.set(msg, (w.log.messages.get(msg) ?? 0) + 1);
      });
      workers.push(w);
    }
    await Promise.all(workers.map((w) => w.cli.waitForLine(/"worker started"/, 300_000)));
    const workersStartSeconds = (Date.now() - t) / 1000;
    progress(`${plan.workers} worker(s) started in ${workersStartSeconds.toFixed(1)} s`);

    const rss = new RssWatch();
    for (const w of workers) rss.watch(w.cli.pid);
    const conns = new ConnectionSampler(pool, database.name, "bench-worker");
    const cpu0 = { workers: workers.map((w) => cpuSeconds(w.cli.pid) ?? 0), sandbox: cpuSeconds(sandbox.pid) ?? 0 };
    const machine0 = machineCpu();
    const cpuLast = [...cpu0.workers];
    const runStart = Date.now();
    let lastProgress = Date.now();
    let nextSample = 0;
    /** One tick of the watchers: connections, RSS, CPU, dead workers, a progress line. */
    const tick = async (what: () => string) => {
      if (Date.now() < nextSample) return sleep(nextSample - Date.now());
      nextSample = Date.now() + 1000;
      await conns.sample();
      rss.sampleAll();
      workers.forEach((w, k) => (cpuLast[k] = cpuSeconds(w.cli.pid) ?? cpuLast[k]!));
      for (const w of workers)
        if (!killed.has(w.index) && w.cli.child.exitCode !== null)
          throw new Error(`worker ${w.index + 1} exited (code ${w.cli.child.exitCode}):\n${w.cli.tail()}`);
      if (Date.now() - lastProgress >= 30_000) {
        lastProgress = Date.now();
        progress(`${((Date.now() - runStart) / 1000).toFixed(0)} s: ${what()}`);
      }
    };
    const syncedAccounts = async () => {
      try {
        const { rows } = await pool.query<{ n: number }>(
          `SELECT count(DISTINCT account_name)::int AS n FROM sync_runs
           WHERE stream = 'bills' AND outcome = 'ok' AND account_name <> $1`,
          [BACKFILL_ACCOUNT],
        );
        return rows[0]?.n ?? 0;
      } catch {
        return -1;
      }
    };

    // Warm-up: every account's history synced once.
    let synced = 0;
    let nextCheck = 0;
    while (synced < plan.accounts && Date.now() - runStart < plan.warmupMaxMs) {
      if (Date.now() >= nextCheck) {
        synced = await syncedAccounts();
        nextCheck = Date.now() + 2000;
      }
      await tick(() => `warm-up, ${int(synced)} of ${int(plan.accounts)} accounts synced once`);
    }
    const warmup = {
      reached: synced >= plan.accounts,
      seconds: (Date.now() - runStart) / 1000,
      accountsSynced: synced,
    };
    progress(
      `warm-up ${warmup.reached ? "done" : "NOT done"} in ${warmup.seconds.toFixed(0)} s (${int(synced)} synced)`,
    );
    const W = Date.now();
    const statsW = await sandbox.phase();
    const redisWarm = (await redisInfo(redis.url, "memory")).used_memory ?? 0;

    // The measured part, with the scenario's events.
    let measureEnd = W + plan.durationMs;
    const events: { atMs: number; name: string; run: () => Promise<void> }[] = [];
    const faults: { name: string; atMs: number; recoveredMs: number }[] = [];
    let backfill: { addedAtMs: number; doneAtMs: number | null; progress: [number, number][] } | undefined;
    if (plan.backfillBills > 0) {
      events.push({
        atMs: W + 30_000,
        name: "add the backfill account",
        run: async () => {
          const c = DEFAULT_SANDBOX_CREDENTIALS;
          const add = startCli(
            [
              "accounts",
              "add",
              BACKFILL_ACCOUNT,
              "--coins",
              "2",
              "--backfill-from",
              String(startMs),
              "--from-env",
              "BF",
            ],
            {
              ...baseEnv(0, "bench-cli"),
              BF_API_KEY: c.apiKey,
              BF_API_SECRET: c.apiSecret,
              BF_API_PASSPHRASE: c.passphrase,
            },
            scope,
            "accounts add",
          );
          const code = await add.exited;
          if (code !== 0) throw new Error(`accounts add exited ${code}:\n${add.tail()}`);
          backfill = { addedAtMs: Date.now(), doneAtMs: null, progress: [] };
          progress(`account ${BACKFILL_ACCOUNT} added (${int(plan.backfillBills)} bills of history)`);
        },
      });
    }
    if (plan.faults) {
      const at = (n: number) => W + n * intervalMs;
      events.push(
        {
          atMs: at(FAULT_SCHEDULE.killWorker),
          name: "SIGKILL worker 1",
          run: () => {
            killed.add(0);
            workers[0]!.cli.child.kill("SIGKILL");
            faults.push({ name: `SIGKILL of worker 1 of ${plan.workers}`, atMs: Date.now(), recoveredMs: Date.now() });
            return Promise.resolve();
          },
        },
        {
          atMs: at(FAULT_SCHEDULE.restartRedis),
          name: "restart Redis",
          run: async () => {
            const a = Date.now();
            await redis.stop();
            await sleep(OUTAGE_MS);
            await redis.start();
            faults.push({
              name: `Redis restart (down ${((Date.now() - a) / 1000).toFixed(1)} s)`,
              atMs: a,
              recoveredMs: Date.now(),
            });
          },
        },
        {
          atMs: at(FAULT_SCHEDULE.restartPostgres),
          name: "restart PostgreSQL",
          run: async () => {
            const a = Date.now();
            await database.server!.stop("fast");
            await sleep(OUTAGE_MS);
            await database.server!.start();
            faults.push({
              name: `PostgreSQL restart (down ${((Date.now() - a) / 1000).toFixed(1)} s)`,
              atMs: a,
              recoveredMs: Date.now(),
            });
          },
        },
      );
      measureEnd = Math.max(measureEnd, at(FAULT_SCHEDULE.restartPostgres + FAULT_SCHEDULE.after) + OUTAGE_MS + 5000);
    }
    let nextBackfillSample = 0;
    while (Date.now() < measureEnd || events.length > 0) {
      const due = events.findIndex((e) => e.atMs <= Date.now());
      if (due >= 0) {
        const [e] = events.splice(due, 1);
        progress(e!.name);
        await e!.run();
      }
      if (backfill && backfill.doneAtMs === null && Date.now() >= nextBackfillSample) {
        nextBackfillSample = Date.now() + 5000;
        try {
          const { rows } = await pool.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM bills WHERE account_name = $1",
            [BACKFILL_ACCOUNT],
          );
          const n = rows[0]?.n ?? 0;
          backfill.progress.push([(Date.now() - backfill.addedAtMs) / 1000, n]);
          if (n >= plan.backfillBills) backfill.doneAtMs = Date.now();
        } catch {
          // PostgreSQL restarting
        }
      }
      await tick(() => {
        const b = backfill ? `, ${BACKFILL_ACCOUNT} ${int(backfill.progress.at(-1)?.[1] ?? 0)} bills` : "";
        return `measuring, ${((measureEnd - Date.now()) / 1000).toFixed(0)} s left${b}`;
      });
    }

    // The end of the run: every account's bills at one instant, then a bounded drain.
    const T0 = Date.now();
    const statsT0: FleetHostStats = await sandbox.phase();
    const cutoff = await sandbox.cutoff(fleetFromMs);
    const redisEnd = await redisInfo(redis.url, "memory");
    const redisKeys = await redisKeyBreakdown(redis.url);
    rss.sampleAll();
    const workerCpu = workers.reduce((s, w, k) => s + (cpuSeconds(w.cli.pid) ?? cpuLast[k]!) - cpu0.workers[k]!, 0);
    const sandboxCpu = (cpuSeconds(sandbox.pid) ?? cpu0.sandbox) - cpu0.sandbox;
    const machine1 = machineCpu();
    const appended = await sandbox.appended(0);
    const upToCutoff = appended.slice(0, cutoff.appended);
    const seenAtEnd = await firstSeen(pool, upToCutoff);
    const notStoredAtEnd = upToCutoff.length - seenAtEnd.size;
    const lastRuns = await runsSince(pool, 0);
    const staleMs: number[] = [];
    let never = 0;
    for (let i = 0; i < plan.accounts; i++) {
      const r = lastRuns.get(fleetName(i));
      if (r === undefined) never++;
      else staleMs.push(T0 - r.at(-1)!);
    }
    progress(`run ended; ${notStoredAtEnd} appended bills not stored yet, draining (at most 3 intervals)`);
    let seen = seenAtEnd;
    const drainStart = Date.now();
    while (seen.size < upToCutoff.length && Date.now() - drainStart < 3 * intervalMs) {
      await tick(() => `draining, ${upToCutoff.length - seen.size} left`);
      await sleep(2000);
      seen = await firstSeen(pool, upToCutoff);
    }
    const drainSeconds = (Date.now() - drainStart) / 1000;

    // Exactness: one query for every account, then some accounts row by row.
    const names = cutoff.accounts.map((_, i) => fleetName(i));
    const { rows: digests } = await pool.query<{ account: string; count: number; digest: string }>(STORED_DIGEST, [
      names,
      cutoff.accounts.map((c) => c.lastBillId),
      fleetFromMs,
    ]);
    const byName = new Map(digests.map((d) => [d.account, d]));
    const mismatched = names.filter((n, i) => {
      const d = byName.get(n);
      return d === undefined || d.count !== cutoff.accounts[i]!.count || d.digest !== cutoff.accounts[i]!.digest;
    });
    const spot = [...new Set([0, 1, Math.floor(plan.accounts / 2), plan.accounts - 2, plan.accounts - 1])].filter(
      (i) => i >= 0 && i < plan.accounts,
    );
    let spotIdentical = 0;
    for (const i of spot) {
      const last = BigInt(cutoff.accounts[i]!.lastBillId);
      const truth = (await sandbox.bills(i)).filter((b) => BigInt(b.billId) <= last && b.cTimeMs >= fleetFromMs);
      const { rows } = await pool.query<SandboxBill>(STORED_ROWS, [fleetName(i), String(last), fleetFromMs]);
      if (JSON.stringify(rows) === JSON.stringify(truth.map(shape))) spotIdentical++;
    }
    const quarantined = (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM quarantine")).rows[0]?.n ?? 0;
    // The workers' backends report their row counts within about a second of a transaction's end.
    await sleep(2000);
    const { rows: writeRows } = await pool.query<{ inserted: string; updated: string; revisions: string }>(
      `SELECT (SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'bills' AND schemaname = current_schema())::text AS inserted,
              (SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'bills' AND schemaname = current_schema())::text AS updated,
              (SELECT count(*) FROM bill_revisions)::text AS revisions`,
    );
    const billWrites = {
      inserted: Number(writeRows[0]?.inserted ?? 0),
      updated: Number(writeRows[0]?.updated ?? 0),
      revisions: Number(writeRows[0]?.revisions ?? 0),
    };
    const { rows: pageRows } = await pool.query<{ runs: number; pages: number; max: number; multi: number }>(
      `SELECT count(*)::int AS runs, coalesce(sum(pages), 0)::int AS pages, coalesce(max(pages), 0)::int AS max,
              count(*) FILTER (WHERE pages > 1)::int AS multi
       FROM sync_runs WHERE stream = 'bills' AND started_at >= to_timestamp($1::float8 / 1000)
         AND finished_at <= to_timestamp($2::float8 / 1000) AND account_name <> $3`,
      [W, T0, BACKFILL_ACCOUNT],
    );
    const { rows: failures } = await pool.query<{ stream: string; error: string; n: number }>(
      `SELECT CASE WHEN stream LIKE 'bills-backfill%' THEN 'bills-backfill' ELSE stream END AS stream,
              left(regexp_replace(coalesce(error, '?'), '[0-9]{4,}', '#', 'g'), 160) AS error, count(*)::int AS n
       FROM sync_runs WHERE outcome = 'failed' GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5`,
    );
    const { rows: outcomes } = await pool.query<{ stream: string; outcome: string; n: number }>(
      `SELECT CASE WHEN stream LIKE 'bills-backfill%' THEN 'bills-backfill' ELSE stream END AS stream, outcome,
              count(*)::int AS n FROM sync_runs GROUP BY 1, 2 ORDER BY 1, 2`,
    );

    // Freshness of the bills appended while it ran.
    const lat = (pick: (appendedAtMs: number) => boolean) =>
      latencies(upToCutoff.flatMap(([, , at], k) => (pick(at) && seen.has(k) ? [(seen.get(k)! - at) / 1000] : [])));
    const steady = lat((at) => at >= W);

    // Faults: per account, the longest stretch without a successful bills run after each recovery.
    let faultRecords: FaultRecord[] | undefined;
    if (plan.faults) {
      faultRecords = [];
      for (const f of faults) {
        const runs = await runsSince(pool, f.recoveredMs);
        const gaps: number[] = [];
        let allSyncedAfterMs = 0;
        for (const n of names) {
          const r = runs.get(n) ?? [];
          let prev = f.recoveredMs;
          let gap = 0;
          for (const x of r) {
            gap = Math.max(gap, x - prev);
            prev = x;
          }
          gap = Math.max(gap, T0 - prev);
          gaps.push(gap);
          allSyncedAfterMs = Math.max(allSyncedAfterMs, (r[0] ?? T0) - f.recoveredMs);
        }
        const g = latencies(gaps);
        faultRecords.push({
          ...f,
          atSeconds: (f.atMs - W) / 1000,
          maxGapMs: g.max,
          p99GapMs: g.p99,
          staleOver3: gaps.filter((x) => x > 3 * intervalMs).length,
          allSyncedAfterMs,
          freshnessAfter: lat((at) => at >= f.atMs),
        });
      }
    }

    let backfillResult: FleetResult["backfill"];
    if (plan.backfillBills > 0) {
      const b = backfill;
      const primary = await sandbox.primary();
      const { rows } = await pool.query<{ count: number; digest: string }>(
        `SELECT count(*)::int AS count, md5(coalesce(string_agg(concat_ws('|', bill_id, coin, coalesce(symbol, ''), business_type,
           amount::text, balance::text, fill_fee::text, created_at_ms::text), E'\\n'
           ORDER BY created_at_ms, bill_id::numeric), '')) AS digest FROM bills WHERE account_name = $1`,
        [BACKFILL_ACCOUNT],
      );
      const stored = rows[0]?.count ?? 0;
      backfillResult = {
        addedAfterSeconds: b ? (b.addedAtMs - W) / 1000 : NaN,
        bills: primary.count,
        stored,
        doneSeconds: b?.doneAtMs ? (b.doneAtMs - b.addedAtMs) / 1000 : null,
        exact: stored === primary.count ? rows[0]?.digest === primary.digest : null,
        progress: b?.progress ?? [],
        othersDuring: b ? lat((at) => at >= b.addedAtMs && at <= (b.doneAtMs ?? T0)) : latencies([]),
      };
    }

    const byAddress: FleetResult["ipPeak"]["byAddress"] = {};
    for (const [a, s] of Object.entries(statsT0.addresses))
      byAddress[a] = {
        run: s.peak,
        steady: s.phasePeak,
        requests: s.requests,
        steadyP50: s.phaseP50,
        steadyP99: s.phaseP99,
        steadyOver90: s.phaseShareOver90,
      };
    const ledger = (s: FleetHostStats) => s.sandbox.billsRequests + s.sandbox.incomeRequests;
    const steadyMs = T0 - W;
    const logs = workers.map((w) => w.log);
    return {
      plan,
      runsSourcesThroughTsx: !distIsCurrent(),
      revision: revision(),
      registerSeconds,
      workersStartSeconds,
      warmup,
      measuredSeconds: steadyMs / 1000,
      exact: {
        accounts: names.length - mismatched.length,
        of: names.length,
        mismatched: mismatched.slice(0, 10),
        spotChecked: spot.length,
        spotIdentical,
      },
      quarantined,
      billWrites,
      freshness: {
        steady,
        warmup: lat((at) => at < W),
        appendedTotal: upToCutoff.length,
        notStoredAtEnd,
        notStoredAfterDrain: upToCutoff.length - seen.size,
        drainSeconds,
      },
      staleness: { ...pick3(latencies(staleMs.map((x) => x / 1000))), never },
      rateLimited: {
        total: statsT0.sandbox.rateLimited,
        steady: statsT0.sandbox.rateLimited - statsW.sandbox.rateLimited,
      },
      ipPeak: { sandboxMax: statsT0.sandbox.maxIpWeightInWindow, byAddress },
      workerPeakRssBytes: rss.peak(),
      redis: {
        beforeBytes: redisBefore,
        warmBytes: redisWarm,
        endBytes: redisEnd.used_memory ?? 0,
        perAccountBytes: ((redisEnd.used_memory ?? 0) - redisBefore) / plan.accounts,
        peakBytes: redisEnd.used_memory_peak ?? 0,
        byKeyShape: redisKeys.slice(0, 12),
      },
      pgConnections: {
        peakPerWorker: conns.peakPerProcess(),
        peakTotal: conns.peakTotal,
        byName: Object.fromEntries(conns.peakByName),
      },
      requests: {
        ledgerPerAccountPerInterval: (ledger(statsT0) - ledger(statsW)) / plan.accounts / (steadyMs / intervalMs),
        accountPerAccountPerSnapshotInterval:
          (statsT0.sandbox.accountRequests - statsW.sandbox.accountRequests) /
          plan.accounts /
          (steadyMs / plan.snapshotIntervalMs),
        connectionsAccepted: statsT0.connections,
        requestsTotal: statsT0.sandbox.requests,
      },
      billsRuns: {
        runs: pageRows[0]?.runs ?? 0,
        pagesPerRun: (pageRows[0]?.pages ?? 0) / Math.max(1, pageRows[0]?.runs ?? 0),
        maxPages: pageRows[0]?.max ?? 0,
        runsOverOnePage: pageRows[0]?.multi ?? 0,
      },
      syncs: workers.reduce<Record<string, SyncTally>>((all, w) => {
        for (const [k, t] of w.syncs) {
          const a = (all[k] ??= { runs: 0, requests: 0, hedged: 0, calledOff: 0 });
          a.runs += t.runs;
          a.requests += t.requests;
          a.hedged += t.hedged;
          a.calledOff += t.calledOff;
        }
        return all;
      }, {}),
      failedRuns: failures.map((f): [string, string, number] => [f.stream, f.error, f.n]),
      runsByOutcome: Object.fromEntries(outcomes.map((o) => [`${o.stream} ${o.outcome}`, o.n])),
      workerLog: {
        errors: logs.reduce((s, l) => s + l.errors, 0),
        warnings: logs.reduce((s, l) => s + l.warnings, 0),
        messages: logs.reduce<Record<string, number>>((all, l) => {
          for (const [m, n] of l.messages) all[m] = (all[m] ?? 0) + n;
          return all;
        }, {}),
      },
      cpu: {
        workers: workerCpu,
        sandbox: sandboxCpu,
        machineBusyShare: (machine1.busy - machine0.busy) / Math.max(1e-9, machine1.total - machine0.total),
        seconds: (T0 - runStart) / 1000,
      },
      ...(backfillResult ? { backfill: backfillResult } : {}),
      ...(faultRecords ? { faults: faultRecords } : {}),
    };
  } finally {
    await scope.run();
  }
}

/** Adds one "bills sync finished" log line (the run's summary) to its stream's tally. */
function tallySync(syncs: Map<string, SyncTally>, line: string): void {
  try {
    const j = JSON.parse(line) as {
      stream?: string;
      requests?: number;
      requestsHedged?: number;
      requestsCalledOff?: number;
    };
    const stream = (j.stream ?? "?").replace(/^bills-backfill.*/, "bills-backfill");
    const t = syncs.get(stream) ?? { runs: 0, requests: 0, hedged: 0, calledOff: 0 };
    t.runs++;
    t.requests += j.requests ?? 0;
    t.hedged += j.requestsHedged ?? 0;
    t.calledOff += j.requestsCalledOff ?? 0;
    syncs.set(stream, t);
  } catch {
    // not JSON
  }
}

function revision(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { encoding: "utf8" }).trim() !== "";
    return `${head}${dirty ? "+" : ""}`;
  } catch {
    return "?";
  }
}

function pick3(l: Latencies): { p50: number; p99: number; max: number } {
  return { p50: l.p50, p99: l.p99, max: l.max };
}

/** A sandbox bill in the shape STORED_ROWS returns. */
function shape(b: SandboxBill) {
  return {
    billId: b.billId,
    coin: b.coin,
    symbol: b.symbol,
    businessType: b.businessType,
    amount: b.amount,
    balance: b.balance,
    fillFee: b.fillFee,
    cTimeMs: b.cTimeMs,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const s1 = (x: number) => (Number.isFinite(x) ? `${x.toFixed(1)} s` : "-");
const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
const lats = (l: Latencies) => `${s1(l.p50)} / ${s1(l.p99)} / ${s1(l.max)} (${int(l.count)} bills)`;

export function fleetRows(r: FleetResult): Row[] {
  const p = r.plan;
  const i = p.billsIntervalMs / 1000;
  const peakPct = (100 * r.ipPeak.sandboxMax) / IP_BUDGET;
  const addresses = Object.entries(r.ipPeak.byAddress).sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }));
  const maxAddressPeak = Math.max(0, ...addresses.map(([, a]) => a.run));
  const span = p.historyMs >= DAY ? `${p.historyMs / DAY} days` : `${p.historyMs / 3_600_000} h`;
  const egress = p.addressPerWorker ? `each worker its own address 127.0.0.2..${1 + p.workers}` : "one egress IP";
  const warm = r.warmup.reached ? "" : ` (NOT reached: ${int(r.warmup.accountsSynced)} synced)`;
  const differing = r.exact.mismatched.length ? ` (first differing: ${r.exact.mismatched.join(", ")})` : "";
  const never = r.staleness.never ? `; ${r.staleness.never} accounts never synced` : "";
  const redisWarm = (r.redis.warmBytes - r.redis.beforeBytes) / p.accounts;
  const errors = Object.entries(r.workerLog.messages)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 6)
    .map(([m, n]) => `${n} x "${m}"`)
    .join("; ");
  const f = r.freshness;
  const rows: Row[] = [
    [
      "accounts x workers",
      `${int(p.accounts)} x ${p.workers} (${egress}), ${p.billsPerAccount} bills each over ${span}, ` +
        `${int(p.liveBillsPerMinute)} new bills/min over the fleet, BILLS_INTERVAL_MS ${int(p.billsIntervalMs)}, ` +
        `SNAPSHOT_INTERVAL_MS ${int(p.snapshotIntervalMs)}, DATABASE_POOL_MAX ${POOL_MAX}` +
        `; commit ${r.revision}` +
        (r.runsSourcesThroughTsx ? " (the workers ran the sources through tsx: dist/ not current)" : ""),
    ],
    [
      "registration / workers up / warm-up (every account synced once)",
      `${s1(r.registerSeconds)} / ${s1(r.workersStartSeconds)} / ${s1(r.warmup.seconds)}${warm}`,
    ],
    ["measured part after the warm-up", s1(r.measuredSeconds)],
    [
      "every bill exact at the end (count + content digest per account; spot check row by row)",
      `${int(r.exact.accounts)} of ${int(r.exact.of)} accounts exact${differing}; ` +
        `${r.exact.spotIdentical} of ${r.exact.spotChecked} identical row by row; quarantine ${r.quarantined}`,
    ],
    [
      `bills row updates over the run vs revisions filed (goal equal: ${verdict(r.billWrites.updated === r.billWrites.revisions)})`,
      `${int(r.billWrites.updated)} updates, ${int(r.billWrites.revisions)} revisions; ` +
        `${int(r.billWrites.inserted)} rows inserted (pg_stat_user_tables n_tup_upd / n_tup_ins on bills)`,
    ],
    [
      "new bills appended -> stored, measured part: p50 / p99 / max " +
        `(goal p99 <= 120 s: ${verdict(f.steady.p99 <= 120)})`,
      `${lats(f.steady)}; p99 = ${(f.steady.p99 / i).toFixed(2)} intervals`,
    ],
    ["new bills appended -> stored, during the warm-up", lats(f.warmup)],
    [
      "appended bills not stored at the end of the run / after the drain",
      `${int(f.notStoredAtEnd)} of ${int(f.appendedTotal)} / ${int(f.notStoredAfterDrain)} ` +
        `(drain ${s1(f.drainSeconds)})`,
    ],
    [
      "since each account's last successful bills run, at the end: p50 / p99 / max",
      `${s1(r.staleness.p50)} / ${s1(r.staleness.p99)} / ${s1(r.staleness.max)}${never}`,
    ],
    [
      `429s from the sandbox (goal 0: ${verdict(r.rateLimited.total === 0)})`,
      `${r.rateLimited.total} (measured part ${r.rateLimited.steady})`,
    ],
    [
      `peak IP weight in a 10 s window, of ${IP_BUDGET} ` +
        `(goal <= 90%: ${verdict(Math.max(peakPct, (100 * maxAddressPeak) / IP_BUDGET) <= 90)})`,
      `${r.ipPeak.sandboxMax} = ${peakPct.toFixed(0)}% (the sandbox's limiter, highest address); per source address, ` +
        `run / measured part: ${addresses.map(([a, x]) => `${a} ${x.run}/${x.steady}`).join(", ")}`,
    ],
    [
      "IP window in the measured part, sampled each second: p50 / p99, share of seconds at >= 90% of the budget",
      addresses
        .map(([a, x]) => `${a} ${x.steadyP50} / ${x.steadyP99}, ${(100 * x.steadyOver90).toFixed(0)}%`)
        .join("; "),
    ],
    [
      `worker peak RSS (VmHWM; goal <= 512 MB: ${verdict(r.workerPeakRssBytes <= 512 * 2 ** 20)})`,
      `${mb(r.workerPeakRssBytes)}${p.workers > 1 ? " (highest of the workers)" : ""}`,
    ],
    [
      `Redis used_memory per account (goal <= 2 KB: ${verdict(r.redis.perAccountBytes <= 2048)})`,
      `${int(r.redis.perAccountBytes)} B ((end ${mb(r.redis.endBytes)} - before ${mb(r.redis.beforeBytes)}) / ` +
        `${int(p.accounts)}; after the warm-up ${int(redisWarm)} B; peak ${mb(r.redis.peakBytes)})`,
    ],
    [
      "Redis at the end, largest key shapes: keys, MEMORY USAGE",
      r.redis.byKeyShape
        .slice(0, 6)
        .map(([k, n, b]) => `${k} ${int(n)} keys ${int(b / 1024)} KB`)
        .join("; "),
    ],
    [
      `PostgreSQL connections per worker, peak ` +
        `(goal <= DATABASE_POOL_MAX ${POOL_MAX}: ${verdict(r.pgConnections.peakPerWorker <= POOL_MAX)})`,
      `${r.pgConnections.peakPerWorker}${p.workers > 1 ? ` (all workers together ${r.pgConnections.peakTotal})` : ""}`,
    ],
    [
      "ledger requests (bills + income) per account per bills interval, measured part",
      r.requests.ledgerPerAccountPerInterval.toFixed(2),
    ],
    [
      "scheduled bills runs in the measured part: runs, requests per run (sync_runs.pages), runs of more than one",
      `${int(r.billsRuns.runs)}, ${r.billsRuns.pagesPerRun.toFixed(2)} (max ${r.billsRuns.maxPages}), ` +
        int(r.billsRuns.runsOverOnePage),
    ],
    [
      "bills syncs of the whole run by stream (worker log): runs, requests, hedged, called off",
      Object.entries(r.syncs)
        .map(([k, t]) => `${k} ${int(t.runs)}, ${int(t.requests)}, ${int(t.hedged)}, ${int(t.calledOff)}`)
        .join("; "),
    ],
    [
      "account requests per account per snapshot interval, measured part",
      r.requests.accountPerAccountPerSnapshotInterval.toFixed(2),
    ],
    [
      "requests / TCP connections the sandbox accepted (whole run)",
      `${int(r.requests.requestsTotal)} / ${int(r.requests.connectionsAccepted)}`,
    ],
    [
      "sync_runs by stream and outcome",
      Object.entries(r.runsByOutcome)
        .map(([k, v]) => `${k} ${int(v)}`)
        .join(", "),
    ],
    [
      "failed runs, commonest reasons",
      r.failedRuns.length === 0 ? "none" : r.failedRuns.map(([k, e, n]) => `${n} x ${k}: "${e}"`).join("; "),
    ],
    [
      "worker log: errors / warnings",
      `${r.workerLog.errors} / ${r.workerLog.warnings}${errors ? ` (e.g. ${errors})` : ""}`,
    ],
    [
      "CPU seconds: workers / sandbox; machine busy",
      `${r.cpu.workers.toFixed(0)} / ${r.cpu.sandbox.toFixed(0)} over ${s1(r.cpu.seconds)}; ` +
        `${(100 * r.cpu.machineBusyShare).toFixed(0)}% of ${os.cpus().length} cores`,
    ],
  ];
  if (r.backfill) {
    const b = r.backfill;
    const rate = b.doneSeconds ? b.bills / b.doneSeconds : NaN;
    const done =
      b.doneSeconds === null
        ? "not done by the end"
        : `done ${s1(b.doneSeconds)} after it was added (${int(rate)} bills/s)`;
    const byMinute = b.progress
      .filter(([t], k, a) => k === a.length - 1 || Math.floor(t / 60) !== Math.floor((a[k + 1]?.[0] ?? 0) / 60))
      .map(([t, n]) => `${t.toFixed(0)} s ${int(n)}`)
      .join(", ");
    rows.push(
      [
        "backfilling account (added during the run): progress",
        `${int(b.stored)} of ${int(b.bills)} bills stored; ${done}; ` +
          `exact ${b.exact === null ? "-" : b.exact ? "yes" : "NO"}; by minute: ${byMinute}`,
      ],
      [
        `other accounts' new bills while it backfilled: p50 / p99 / max ` +
          `(goal p99 <= 120 s: ${verdict(b.othersDuring.p99 <= 120)})`,
        lats(b.othersDuring),
      ],
    );
  }
  for (const x of r.faults ?? []) {
    rows.push([
      `${x.name}, ${s1(x.atSeconds)} into the measured part ` +
        `(goal: no account over 3 intervals without a successful bills run: ${verdict(x.staleOver3 === 0)})`,
      `every account synced again within ${s1(x.allSyncedAfterMs / 1000)} of the recovery; ` +
        `longest stretch without a successful bills run, p99 / max ${s1(x.p99GapMs / 1000)} / ` +
        `${s1(x.maxGapMs / 1000)} = ${(x.maxGapMs / p.billsIntervalMs).toFixed(2)} intervals ` +
        `(${x.staleOver3} over 3); ` +
        `new bills from then on: ${lats(x.freshnessAfter)}`,
    ]);
  }
  return rows;
}

export const FLEET_METHOD = [
  "Services: a redis-server of the run's own (AOF on, noeviction, as the README asks for BullMQ; its used_memory " +
    "is measured, so nothing else may share it); a fresh migrated database on the bench's PostgreSQL " +
    "(BENCH_DATABASE_URL / TEST_DATABASE_URL, else embedded), or for `faults` on a private server it may restart.",
  "The fleet sandbox runs in a process of its own (bench/fleet-sandbox-host.ts): fleet mode, N accounts of 20 bills " +
    "over --history-hours, limits 500 IP / 500 UID weight per 10 s (the IP budget per source address), " +
    "`liveBillsPerMinute` N / 5 from its start. Each source address's sliding-window weight is also tallied from " +
    "node:http's diagnostics channels (read-only: the sandbox's stats have one peak over all addresses).",
  "Every account is registered straight into the accounts table, sealed under a master key as `accounts add` " +
    "would (createMany in batches of 1,000), coins [2]. Workers: `node bin/ledger-sync.js worker` subprocesses " +
    "(bench/cli-process.ts), LEDGER_SYNC_MASTER_KEY, DATABASE_POOL_MAX 10, default budgets, BACKFILL_FROM = the " +
    "history's start, DATABASE_URL with application_name=bench-worker-<k> (the URL's wins), EGRESS_ID " +
    "bench-egress (10k: EGRESS_LOCAL_ADDRESS 127.0.0.<2+k>, EGRESS_ID egress-<2+k>).",
  "Warm-up: until every fleet account has a successful bills run, bounded by --warmup-max; the measured part " +
    "(--duration) follows. At its end the sandbox gives every account's last bill id, count and content digest at " +
    "one instant; appended bills are drained for at most 3 intervals; then one query digests the stored bills up " +
    "to each account's last id (GROUP BY account), and 5 accounts are compared row by row.",
  "Freshness: bills.first_seen_at - the sandbox's appendedAtMs (one machine clock), for bills appended in the " +
    "measured part (the warm-up's apart). Staleness: end of run - each account's last successful bills run.",
  "Peak RSS: VmHWM of each worker (/proc). PostgreSQL connections: pg_stat_activity by application_name every " +
    "second. Redis per account: (used_memory at the end - before the workers) / N. Requests per account per " +
    "interval: the sandbox's bills + income requests in the measured part / N / intervals elapsed.",
  "backfill: 30 s into the measured part `ledger-sync accounts add bf --coins 2 --backfill-from <90 days ago> " +
    "--from-env BF` registers the sandbox's primary account (200,000 bills over 90 days); its stored count is " +
    "sampled every 5 s, and the other accounts' freshness while it backfills is reported.",
  "faults: 4 workers on one IP. 1 interval into the measured part worker 1 gets SIGKILL (not restarted); at 2 " +
    "intervals Redis is stopped (SIGTERM, AOF written) and started 5 s later on the same port and files; at 3 " +
    "PostgreSQL is stopped (fast) and started 5 s later; the run ends 4 intervals after that. Per fault: the " +
    "longest stretch any account went without a successful bills run from the recovery to the end.",
];

export async function runFleet(argv: string[]): Promise<number> {
  let a: FleetArgs;
  try {
    a = parseFleetArgs(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  const command = ["npm run bench --", ...argv].join(" ");
  let failed = 0;
  try {
    for (const scenario of a.scenarios) {
      const plan = planOf(scenario, a);
      const machine = await machineLine();
      process.stderr.write(`bench: fleet-${scenario}...\n`);
      try {
        const r = await runFleetScenario(plan);
        const section: Section = {
          id: `fleet-${scenario}`,
          title: `Fleet: ${scenario}`,
          command,
          machine,
          rows: fleetRows(r),
          method: FLEET_METHOD,
        };
        printSection(section);
        if (a.json) process.stdout.write(`${JSON.stringify({ scenario, command, machine, result: r })}\n`);
      } catch (err) {
        failed++;
        process.stderr.write(`bench: fleet-${scenario} failed: ${(err as Error).stack ?? String(err)}\n`);
      }
    }
  } finally {
    await runScope.run();
  }
  return failed > 0 ? 1 : 0;
}
