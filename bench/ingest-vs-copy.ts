// Item 1: end-to-end backfill (HTTP, lossless parse, validate, map, bulk write) of the sandbox's
// history into a fresh database, against raw COPY of the very same rows into an identical table
// and a per-row Prisma upsert loop over the first N of them, in the same run on the same server.
// Also where the time goes (profile) and the CPU each process used meanwhile.
//
// The backfill and its COPY run as a pair, RUNS times, each pair into a fresh database: on this
// VM either figure alone varies by a third from run to run (other work on the host), so one pair
// could land the ratio anywhere from 0.43 to 0.63. The pair with the median ratio is reported in
// full, with every pair's ratio beside it.
import { cpus as cpuList } from "node:os";
import { pino } from "pino";
import { createDb } from "../src/store/prisma.ts";
import { syncAccountBills } from "../src/streams/bills/index.ts";
import { Cleanup } from "./cleanup.ts";
import { timeCopyOfSameRows } from "./copy-same-rows.ts";
import { timePerRowUpsert } from "./per-row-upsert.ts";
import { backendCpu, benchDatabase } from "./postgres.ts";
import { cpuSeconds, machineCpu } from "./proc-stats.ts";
import { sandboxBenchClient, type CallProfile } from "./profiled-client.ts";
import { int, pct, ratio, sec, type Row } from "./report.ts";
import { startSandboxProcess } from "./sandbox-process.ts";
import { timeReread, type Reread } from "./reread.ts";
import { writePlanning, type WriteCost, type WritePlanning } from "./write-planning.ts";

export interface IngestOptions {
  bills: number;
  upsertRows: number;
}

/** Backfill + COPY pairs per run of the item. */
const RUNS = 3;

export interface IngestResult {
  bills: number;
  /** end-to-end ÷ COPY of every pair, in the order they ran. */
  ratios: number[];
  ingestSeconds: number;
  requests: number;
  windows: number;
  /** BillsSyncSummary: time in fetchPage (gate, HTTP, parse, validation) / in commitWindows. */
  fetchSeconds: number;
  writeSeconds: number;
  profile: CallProfile;
  /** CPU seconds of each process, and of the whole machine (every process, ours or not). */
  cpu: { client: number; sandbox: number; postgres: number; machineBusy: number; machineTotal: number };
  copyRows: number;
  copySeconds: number;
  upsertRows: number;
  upsertSeconds: number;
  /** The window write's PostgreSQL time against the months the account holds (write-planning.ts). */
  planning: WritePlanning;
  /** The same history read again into the median pair's database (reread.ts). */
  reread: Reread;
}

/** A fixed history span, so every run serves the same history for the same seed and size. */
export const HISTORY_TO_MS = Date.UTC(2026, 9, 31);
export const HISTORY_FROM_MS = HISTORY_TO_MS - 180 * 86_400_000;

export async function ingestVsCopy(o: IngestOptions): Promise<IngestResult> {
  const scope = new Cleanup();
  try {
    const sandbox = await startSandboxProcess(
      { seed: 7, billCount: o.bills, startMs: HISTORY_FROM_MS, endMs: HISTORY_TO_MS, limits: null },
      scope,
    );
    const pairs: Pair[] = [];
    for (let i = 0; i < RUNS; i++) pairs.push(await backfillAndCopy(o, sandbox, scope));
    const ratioOf = (p: Pair) => o.bills / p.ingestSeconds / (p.copyRows / p.copySeconds);
    const median = [...pairs].sort((a, b) => ratioOf(a) - ratioOf(b))[Math.floor(pairs.length / 2)]!;
    const upsertDatabase = await benchDatabase(scope);
    const upsert = await timePerRowUpsert(median.databaseUrl, upsertDatabase.url, Math.min(o.upsertRows, o.bills));
    const reread = await timeReread(sandbox.url, median.databaseUrl, "bench", {
      fromMs: HISTORY_FROM_MS,
      toMs: HISTORY_TO_MS,
    });
    const planning = await writePlanning(median.databaseUrl, "bench", HISTORY_TO_MS);
    const { databaseUrl: _, ...reported } = median;
    return {
      bills: o.bills,
      ratios: pairs.map(ratioOf),
      planning,
      reread,
      ...reported,
      upsertRows: upsert.rows,
      upsertSeconds: upsert.seconds,
    };
  } finally {
    await scope.run();
  }
}

export type Pair = Omit<IngestResult, "bills" | "ratios" | "upsertRows" | "upsertSeconds" | "planning" | "reread"> & {
  databaseUrl: string;
};

/**
 * One backfill of the whole history into a fresh database, then COPY of the rows it stored.
 * `prepare` runs on the migrated database first (the rollups item turns its triggers off with it).
 */
export async function backfillAndCopy(
  o: Pick<IngestOptions, "bills">,
  sandbox: { url: string; pid: number },
  scope: Cleanup,
  prepare?: (databaseUrl: string) => Promise<void>,
): Promise<Pair> {
  const database = await benchDatabase(scope);
  await prepare?.(database.url);
  const logger = pino({ level: "warn" });
  const client = sandboxBenchClient(sandbox.url, logger);
  const db = createDb(database.url);
  const pgCpu = await backendCpu(database, scope);
  const pgTimer = setInterval(() => void pgCpu.sample().catch(() => undefined), 250);
  try {
    const machine0 = machineCpu();
    const cpu0 = process.cpuUsage();
    const sandboxCpu0 = cpuSeconds(sandbox.pid) ?? 0;
    const t0 = performance.now();
    const summary = await syncAccountBills({
      db,
      client,
      logger,
      accountName: "bench",
      backfillFromMs: HISTORY_FROM_MS,
      lookbackMs: 0,
      fromMs: HISTORY_FROM_MS,
      untilMs: HISTORY_TO_MS,
    });
    const ingestSeconds = (performance.now() - t0) / 1000;
    const cpu1 = process.cpuUsage(cpu0);
    const machine1 = machineCpu();
    const sandboxCpu = (cpuSeconds(sandbox.pid) ?? sandboxCpu0) - sandboxCpu0;
    clearInterval(pgTimer);
    await pgCpu.sample();
    // Stored, not fetched: a bill read twice (a full page's last millisecond read again) counts once.
    if (summary.inserted !== o.bills)
      throw new Error(`benchmark backfill stored ${summary.inserted} of ${o.bills} bills`);
    const copy = await timeCopyOfSameRows(database.url);
    if (copy.rows !== o.bills) throw new Error(`COPY loaded ${copy.rows} of ${o.bills} rows`);
    return {
      databaseUrl: database.url,
      ingestSeconds,
      requests: summary.requests,
      windows: summary.windows,
      fetchSeconds: summary.fetchSeconds,
      writeSeconds: summary.writeSeconds,
      profile: client.profile(),
      cpu: {
        client: (cpu1.user + cpu1.system) / 1e6,
        sandbox: sandboxCpu,
        postgres: pgCpu.seconds(),
        machineBusy: machine1.busy - machine0.busy,
        machineTotal: machine1.total - machine0.total,
      },
      copyRows: copy.rows,
      copySeconds: copy.seconds,
    };
  } finally {
    clearInterval(pgTimer);
    await client.close();
    await db.$disconnect();
  }
}

export function ingestRows(r: IngestResult, sizeNote: string): Row[] {
  const e2e = r.bills / r.ingestSeconds;
  const copy = r.copyRows / r.copySeconds;
  const perRow = r.upsertRows / r.upsertSeconds;
  const p = r.profile;
  const http = p.callSeconds - p.jsonParseSeconds - p.validateMapSeconds;
  const ours = r.cpu.client + r.cpu.sandbox + r.cpu.postgres;
  return [
    ["bills served and backfilled", `${int(r.bills)}${sizeNote}`],
    [
      "end-to-end backfill (HTTP, parse, validate, map, write)",
      `${int(e2e)} bills/s (${sec(r.ingestSeconds)}, ${int(r.requests)} requests, ${int(r.windows)} windows)`,
    ],
    ["raw COPY of the same rows", `${int(copy)} bills/s (${sec(r.copySeconds)})`],
    [`per-row Prisma upsert loop (${int(r.upsertRows)} rows)`, `${int(perRow)} bills/s (${sec(r.upsertSeconds)})`],
    [
      "end-to-end / COPY (goal >= 0.5x)",
      `${ratio(e2e / copy)} (the median of ${r.ratios.length} backfill + COPY pairs: ${r.ratios.map(ratio).join(", ")}; this pair's figures throughout)`,
    ],
    ["end-to-end / per-row upsert (goal >= 30x)", ratio(e2e / perRow)],
    [
      "profile: fetch path, summed over concurrent requests (fetchSeconds)",
      `${sec(r.fetchSeconds)} (${(r.fetchSeconds / r.ingestSeconds).toFixed(1)} requests in flight on average)`,
    ],
    [
      "↳ HTTP round trip incl. budget gate (remainder)",
      `${sec(http)} (${((1000 * http) / Math.max(1, p.calls)).toFixed(2)} ms per request)`,
    ],
    [
      "↳ lossless JSON parse, once per body (estimated)",
      `${sec(p.jsonParseSeconds)} (native JSON.parse of the same text: ${sec(p.nativeJsonParseSeconds)}; ${(p.responseChars / 1e6).toFixed(0)} MB received)`,
    ],
    [
      "↳ validation + mapping (parseBillsPage)",
      `${sec(p.validateMapSeconds)} (${((1e6 * p.validateMapSeconds) / r.bills).toFixed(1)} µs per bill)`,
    ],
    [
      "profile: write path, overlapping the fetches (writeSeconds)",
      `${sec(r.writeSeconds)} (${pct(r.writeSeconds, r.ingestSeconds)} of end-to-end; ${int(r.bills / r.writeSeconds)} bills/s while writing)`,
    ],
    [
      "the same history read again (every bill stored, unchanged)",
      `${int(r.reread.fetched / r.reread.seconds)} bills/s (${sec(r.reread.seconds)}, ${int(r.reread.fetched)} bills fetched): ${int(r.reread.inserted)} inserted, ${int(r.reread.revised)} revised, ${int(r.reread.rowVersions)} row versions made in bill_rows`,
    ],
    ...planningRows(r.planning),
    [
      "CPU seconds during the backfill",
      `client ${r.cpu.client.toFixed(1)}, sandbox ${r.cpu.sandbox.toFixed(1)}, PostgreSQL backends ${r.cpu.postgres.toFixed(1)}: ${ours.toFixed(1)} of ${r.cpu.machineTotal.toFixed(1)} (${cpuList().length} cores x wall) = ${pct(ours, r.cpu.machineTotal)}`,
    ],
    [
      "machine CPU busy meanwhile (every process, ours or not)",
      `${r.cpu.machineBusy.toFixed(1)} s = ${pct(r.cpu.machineBusy, r.cpu.machineTotal)}${r.cpu.machineBusy > ours * 1.25 + 0.5 ? " (well above ours: other work shared the cores)" : ""}`,
    ],
  ];
}

function planningRows(p: WritePlanning): Row[] {
  const cost = (c: WriteCost) =>
    `${(c.planMs + c.execMs).toFixed(1)} ms (planning ${c.planMs.toFixed(1)}, execution ${c.execMs.toFixed(1)})`;
  const at = (i: 0 | 1) => `at ${p.months[i]} months`;
  return [
    [`window write of 5 bills (2 new, 3 read again), PostgreSQL time ${at(0)}`, cost(p.small[0])],
    [`↳ the same ${at(1)}`, cost(p.small[1])],
    [`window write of 1,000 new bills ${at(0)}`, cost(p.batch[0])],
    [`↳ the same ${at(1)}`, cost(p.batch[1])],
  ];
}

export const INGEST_METHOD = [
  "End-to-end: one `syncAccountBills` call (what `sync`/`backfill --inline` run) over the whole history, from a fresh migrated database; the sandbox serves it from its own process with limits off, the client's budget gate is set out of the way (1e9). bills/s = bills ÷ wall time of that call.",
  "COPY: the stored rows are copied out to memory (text format), then `COPY bill_rows_copy FROM STDIN` into `CREATE TABLE bill_rows_copy (LIKE bill_rows INCLUDING ALL) PARTITION BY RANGE (created_at)` with a partition for each month bill_rows has (same columns, defaults, checks, primary key and indexes; no trigger) is timed. bills/s = rows ÷ that time.",
  "Per-row upsert: the first N stored bills (ledger order) are read back, then N sequential awaited `db.bill.upsert({where: {accountName_billId}, create, update})` through the generated Prisma client into a fresh migrated database are timed (no HTTP or parsing charged, so end-to-end ÷ per-row is a lower bound).",
  "Ratios: end-to-end bills/s ÷ COPY bills/s, and end-to-end bills/s ÷ per-row bills/s. The backfill and its COPY run as a pair three times, each into a fresh database (either figure alone varies by a third between runs on this VM); every pair's ratio is listed, and the pair with the median ratio is the one reported (its backfill, COPY, profile and CPU). The per-row loop runs once.",
  "Profile (bench/profiled-client.ts, no change in src): fetchSeconds and writeSeconds are the stream's own summary (time inside fetchPage, summed over the requests in flight at once, so fetchSeconds ÷ wall time is the average number in flight; time inside commitWindows, which runs behind the fetching). Each client call is timed whole; its `parse` step (envelope, per-item validation, mapping to Bill) is wrapped and timed; the lossless JSON parse runs inside the client, so it is estimated by re-parsing a sample of the same response texts (cost per character × characters received). HTTP = call time − one JSON parse − validation, summed over concurrent calls like fetchSeconds: it includes waiting for the sandbox (and for CPU when the machine is busy), waiting behind the other requests in flight, and signing.",
  "Read again: on the median pair's database, a second `syncAccountBills` over the same history from the same sandbox (every bill stored and unchanged: what a repair re-read or a backfill run again does); bills/s = bills fetched ÷ its wall time; row versions = the change of n_tup_upd + n_tup_ins over bill_rows' partitions in pg_stat_user_tables, read after the run's sessions ended.",
  "Window write against the months (bench/write-planning.ts): on the median pair's database, a write of 5 bills (2 new, 3 of the newest stored, as a lookback reads them again) and one of 1,000 new bills, built by the worker's own code, each run 7 times under `EXPLAIN (ANALYZE, FORMAT JSON)` in a transaction rolled back; the median's planning and execution times. Then `ledger_sync_bill_months` adds the 60 months before the history (five more years of books) and both are measured again.",
  "CPU seconds: user+system time of this process, of the sandbox process (/proc/<pid>/stat), and of the PostgreSQL backends serving the database (pids from pg_stat_activity, sampled every 250 ms), against cores × wall time; and the whole machine's busy time from /proc/stat. Ours near 100% means the CPU sets the pace; the machine's well above ours means other work shared the cores.",
];
