// The volume item's measures, each the time inside this process of what the command runs (no
// node start-up): the in-process functions the CLI and the console call, on their own connections.
// Every measure runs twice: cold (its first run after the books were generated, on a connection
// opened for it, the opening included) and warm (the second run, on the same connection).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { TERMINAL_PAGE } from "../src/cli/commands/status.ts";
import { envSchema } from "../src/config/env-schema.ts";
import { fleetSettingsFromEnv } from "../src/console/fleet-settings.ts";
import { startConsoleServer } from "../src/console/server.ts";
import { runExport } from "../src/export/run-export.ts";
import type { FormatName } from "../src/export/formats.ts";
import { resolveAccount } from "../src/statement/account.ts";
import { formatStatementText } from "../src/statement/format-text.ts";
import { monthPeriod } from "../src/statement/period.ts";
import { buildStatement } from "../src/statement/statement.ts";
import { readFleet } from "../src/store/accounts/overview.ts";
import { createDb, type Db } from "../src/store/prisma.ts";
import { isFailing, type AccountReport } from "../src/verify/report.ts";
import { verifyAccount, type VerifyOutcome } from "../src/verify/verify-account.ts";
import { fleetSpec, seedFleet, type SpecAccount } from "../test/console/fleet-fixture.ts";
import type { Cleanup } from "./cleanup.ts";
import { SPAN_TO_MS } from "./volume-generate.ts";

/** One measure: cold and warm milliseconds, and what the warm run returned. */
export interface ColdWarm<T> {
  coldMs: number;
  warmMs: number;
  value: T;
}

export async function msOf<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await run();
  return { ms: performance.now() - started, value };
}

/** Runs `run` twice, one after the other: cold, then warm. */
export async function coldWarm<T>(run: () => Promise<T>): Promise<ColdWarm<T>> {
  const cold = await msOf(run);
  const warm = await msOf(run);
  return { coldMs: cold.ms, warmMs: warm.ms, value: warm.value };
}

/** A Prisma client for one measure, disconnected by `scope`. */
function freshDb(url: string, scope: Cleanup): Db {
  const db = createDb(url);
  scope.add("disconnect a volume measure's client", () => db.$disconnect());
  return db;
}

/** SYNC_LOOKBACK_MS as the configuration defaults it (what `verify` passes). */
const LOOKBACK_MS = envSchema.pick({ SYNC_LOOKBACK_MS: true }).parse({}).SYNC_LOOKBACK_MS;
/** The accounts page's settings, the configuration's defaults (the console reads them from its environment). */
const FLEET_SETTINGS = fleetSettingsFromEnv({});

// ---- storage

export interface Storage {
  bills: number;
  /** Each table's size, all in (heap, TOAST, indexes; every partition's). */
  tables: { name: string; bytes: number }[];
  /** The bills table's heap and TOAST (every partition's). */
  billsHeapBytes: number;
  /** Each index of the bills table (every partition's part of it), largest first. */
  indexes: { name: string; bytes: number }[];
  totalBytes: number;
}

/**
 * What grows with the bills: the bills table first. A storage change that moves the rows to
 * another table names it here; a partitioned table counts with all its partitions.
 */
export const STORAGE_TABLES = [
  "bill_rows",
  "bill_revisions",
  "rollup_rows",
  "bill_id_ranges",
  "bill_coins",
  "bill_forms",
];

/** A relation and, when it is partitioned, its partitions (a plain table's tree is empty). */
const tree = (rel: string) => `(SELECT relid FROM pg_partition_tree(${rel}) UNION SELECT ${rel}) AS tree(relid)`;

export async function storage(c: pg.Client): Promise<Storage> {
  const [bills] = STORAGE_TABLES;
  const tables = (
    await c.query<{ name: string; bytes: string }>(
      `SELECT t AS name, (SELECT sum(pg_total_relation_size(relid)) FROM ${tree("t::regclass")})::text AS bytes
       FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n`,
      [STORAGE_TABLES],
    )
  ).rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
  const indexes = (
    await c.query<{ name: string; bytes: string }>(
      `SELECT name, size::text AS bytes FROM (
         SELECT indexrelid::regclass::text AS name,
                (SELECT sum(pg_relation_size(relid)) FROM ${tree("indexrelid::regclass")}) AS size
         FROM pg_index WHERE indrelid = $1::regclass) i
       ORDER BY size DESC, name`,
      [bills],
    )
  ).rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
  const [row] = (
    await c.query<{ heap: string; bills: string }>(
      `SELECT (SELECT sum(pg_table_size(relid)) FROM ${tree("$1::regclass")})::text AS heap,
              (SELECT count(*) FROM bill_rows)::text AS bills`,
      [bills],
    )
  ).rows;
  return {
    bills: Number(row!.bills),
    tables,
    billsHeapBytes: Number(row!.heap),
    indexes,
    totalBytes: tables.reduce((n, t) => n + t.bytes, 0),
  };
}

// ---- one account: statement, export, verify

export interface StatementFigures {
  bills: number;
  /** Every coin's chain (opening + movements = closing, no break) holds. */
  chainOk: boolean;
}

/** `ledger-sync statement --account A --period M`: resolve the account, build, render as text. */
export function statementRun(url: string, account: string, month: string, scope: Cleanup) {
  const db = freshDb(url, scope);
  return async (): Promise<StatementFigures> => {
    const resolved = await resolveAccount(db, account);
    const s = await buildStatement(db, { account: resolved, period: monthPeriod(month), coinNames: {} });
    formatStatementText(s);
    return { bills: s.bills, chainOk: s.coins.every((c) => c.chain.ok) };
  };
}

export interface ExportFigures {
  format: FormatName;
  account: string;
  bills: number;
  cold: { seconds: number };
  warm: { seconds: number };
}

/** `ledger-sync export --format F --account A --out <file>` (runExport opens its own client each time, as the CLI does). */
export async function exportRuns(
  url: string,
  runs: { format: FormatName; account: string }[],
  scope: Cleanup,
): Promise<ExportFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), "ls-bench-volume-"));
  scope.add("remove the volume exports", () => rmSync(dir, { recursive: true, force: true }));
  const out: ExportFigures[] = [];
  for (const { format, account } of runs) {
    const file = join(dir, `${account}.${format}`);
    const r = await coldWarm(async () => {
      const totals = await runExport({ databaseUrl: url, format, account, out: file });
      rmSync(file);
      return totals.bills;
    });
    out.push({
      format,
      account,
      bills: r.value,
      cold: { seconds: r.coldMs / 1000 },
      warm: { seconds: r.warmMs / 1000 },
    });
  }
  return out;
}

export interface VerifyFigures {
  /** Bills whose balance the continuity check placed in its chain (pairs + each coin's first). */
  bills: number;
  ok: boolean;
  /** "check subject: summary" of each failing or inconclusive check. */
  failing: string[];
}

/**
 * What `ledger-sync verify --account A --no-exchange` runs for one account, with the configured
 * lookback and `now` at the bills cursor (the span's end), so that the cursor-lag check is of the
 * books, not of how long ago they were generated.
 */
export function verifyOne(db: Db, account: string): Promise<VerifyOutcome> {
  return verifyAccount(db, { account, coinNames: {}, lookbackMs: LOOKBACK_MS, now: SPAN_TO_MS });
}

/** Adds one account's outcome to the figures. */
function addOutcome(f: VerifyFigures, o: VerifyOutcome): void {
  f.bills += o.continuity.reduce((n, c) => n + c.pairs + 1, 0);
  f.ok &&= o.report.ok;
  for (const c of o.report.checks.filter(isFailing))
    f.failing.push(`${o.report.account} ${c.check} ${c.subject}: ${c.summary}`);
}

export function verifyAccountRun(url: string, account: string, scope: Cleanup) {
  const db = freshDb(url, scope);
  return async (): Promise<VerifyFigures> => {
    const f: VerifyFigures = { bills: 0, ok: true, failing: [] };
    addOutcome(f, await verifyOne(db, account));
    return f;
  };
}

export interface VerifyAllFigures extends VerifyFigures {
  accounts: number;
  /** process.memoryUsage().rss before the run, and the highest sampled (every 10 ms) during it. */
  rssBefore: number;
  peakRss: number;
}

/** `ledger-sync verify --no-exchange`: every account with bills, one after another, on one client. */
export function verifyAllRun(url: string, scope: Cleanup, progress?: (done: number, of: number) => void) {
  const db = freshDb(url, scope);
  return async (): Promise<VerifyAllFigures> => {
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    const sample = () => (peakRss = Math.max(peakRss, process.memoryUsage().rss));
    const sampler = setInterval(sample, 10);
    try {
      const accounts = (
        await db.$queryRawUnsafe<{ a: string }[]>(
          "SELECT k.name AS a FROM account_keys k WHERE EXISTS (SELECT FROM bill_coins c WHERE c.account_id = k.id) ORDER BY 1",
        )
      ).map((r) => r.a);
      const f: VerifyFigures = { bills: 0, ok: true, failing: [] };
      // The CLI keeps every account's report, to print them at the end.
      const reports: AccountReport[] = [];
      for (const account of accounts) {
        const outcome = await verifyOne(db, account);
        addOutcome(f, outcome);
        reports.push(outcome.report);
        progress?.(reports.length, accounts.length);
      }
      sample();
      return { ...f, accounts: accounts.length, rssBefore, peakRss };
    } finally {
      clearInterval(sampler);
    }
  };
}

// ---- fleet-wide reads: the BI views and an ad-hoc report over bills

/** A month in the middle of the span. */
export const MONTH = "2025-06";
const MONTH_FROM = "2025-06-01";
const MONTH_TO = "2025-07-01";

/** Every BI view (docs/schema.md, "BI views"), with a month's filter where it has a day or a time. */
export const VIEW_QUERIES: { view: string; filter: string }[] = [
  { view: "v_daily_pnl", filter: "day >= $1::date AND day < $2::date" },
  { view: "v_funding", filter: "day >= $1::date AND day < $2::date" },
  { view: "v_fees", filter: "day >= $1::date AND day < $2::date" },
  {
    view: "v_transfers",
    filter:
      "created_at >= ($1::date)::timestamp AT TIME ZONE 'UTC' AND created_at < ($2::date)::timestamp AT TIME ZONE 'UTC'",
  },
  // No month: each account and coin's latest balance, and the positions open (none are generated).
  { view: "v_balances", filter: "" },
  { view: "v_positions_open", filter: "" },
];

export const ADHOC_SQL = `SELECT date_trunc('month', created_at, 'UTC') AS month, symbol, sum(fill_fee) AS fill_fees
FROM bills
WHERE created_at >= ($1::date)::timestamp AT TIME ZONE 'UTC' AND created_at < ($2::date)::timestamp AT TIME ZONE 'UTC'
GROUP BY 1, 2 ORDER BY 1, 2`;

export interface QueryFigures extends ColdWarm<number> {
  label: string;
}

/** A BI tool's client: every value as text, as psql shows it (the time is the database's and the wire's). */
async function textClient(url: string, scope: Cleanup): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, types: { getTypeParser: () => (v: string) => v } });
  await c.connect();
  scope.add("close a volume query client", () => c.end());
  return c;
}

/** Each view's month (every row fetched), then the ad-hoc month × symbol fee report over bills; value = rows. */
export async function fleetQueries(url: string, scope: Cleanup): Promise<QueryFigures[]> {
  const out: QueryFigures[] = [];
  const query = async (label: string, sql: string, params: string[]) => {
    // Cold: a connection opened for the query (its opening included), as a BI tool's first query.
    let c: pg.Client | undefined;
    const r = await coldWarm(async () => {
      c ??= await textClient(url, scope);
      return (await c.query(sql, params)).rowCount ?? 0;
    });
    out.push({ label, ...r });
  };
  for (const q of VIEW_QUERIES)
    await query(
      q.filter ? `${q.view}, ${MONTH}` : `${q.view} (no month)`,
      `SELECT * FROM ${q.view}${q.filter ? ` WHERE ${q.filter}` : ""}`,
      q.filter ? [MONTH_FROM, MONTH_TO] : [],
    );
  await query(`ad-hoc month × symbol fee report over bills, ${MONTH}`, ADHOC_SQL, [MONTH_FROM, MONTH_TO]);
  return out;
}

// ---- the fleet: status and the console at `registered` accounts

/** Per account, as bench/console-fleet.ts seeds it; no rollups (the accounts beyond the volume ones have no bills). */
const FLEET_SIZES = { runs: 200, backfillWindows: 30, rollupDays: 0 };

/**
 * Registers `registered` accounts (at least the volume ones): the volume accounts, healthy and
 * with their bills cursor, then the console fleet's (test/console/fleet-fixture.ts: every state,
 * runs, backfill windows, verify reports, quarantine), all of them in the accounts table. A
 * database that already has them is left as it is. Returns the seconds it took, or null.
 */
export async function seedVolumeFleet(
  c: pg.Client,
  o: { volumeAccounts: string[]; registered: number },
): Promise<number | null> {
  const [row] = (await c.query<{ n: number }>("SELECT count(*)::int AS n FROM accounts")).rows;
  const total = Math.max(o.registered, o.volumeAccounts.length);
  if (row!.n === total) return null;
  if (row!.n !== 0) throw new Error(`volume: the database has ${row!.n} registered accounts, not ${total}`);
  const started = performance.now();
  const volume = new Set(o.volumeAccounts);
  const spec = fleetSpec(total).map((a): SpecAccount =>
    volume.has(a.name)
      ? // Their bills cursor is the generator's; nothing failing.
        { ...a, registered: true, disabled: false, lagMs: null, verify: null, lastRunFailed: false, quarantined: 0 }
      : { ...a, registered: true },
  );
  await seedFleet(c, spec, { ...FLEET_SIZES, nowMs: Date.now() });
  await c.query(
    "VACUUM ANALYZE accounts, sync_state, verify_state, sync_runs, bills_run_stats, exchange_profiles, quarantine",
  );
  return (performance.now() - started) / 1000;
}

export interface FleetFigures extends ColdWarm<string> {
  label: string;
}

/** `status`'s fleet query (a terminal page, and every account as --json), then the console's pages. */
export async function fleetReads(url: string, account: string, scope: Cleanup): Promise<FleetFigures[]> {
  const out: FleetFigures[] = [];
  const db = freshDb(url, scope);
  const options = { staleAfterMs: FLEET_SETTINGS.staleAfterMs, historyDays: FLEET_SETTINGS.historyDays, offset: 0 };
  for (const limit of [TERMINAL_PAGE, null]) {
    const r = await coldWarm(async () => {
      const f = await readFleet(db, { ...options, limit });
      return `${f.accounts.length} of ${f.total} accounts`;
    });
    out.push({
      label: `\`status\` fleet query, ${limit === null ? "every account (--json)" : `a page of ${limit}`}`,
      ...r,
    });
  }
  const server = await startConsoleServer({
    host: "127.0.0.1",
    port: 0,
    token: undefined,
    databaseUrl: url,
    logger: pino({ level: "silent" }),
    fleet: FLEET_SETTINGS,
  });
  scope.add("stop the volume console", () => server.close());
  const pages: [string, string][] = [
    ["console accounts page (first page)", ""],
    [`console account page (${account})`, `accounts/${account}`],
    [`console coin page (${account}, USDT: balance chart and days)`, `accounts/${account}/coins/USDT`],
  ];
  for (const [label, path] of pages) {
    const r = await coldWarm(async () => {
      const res = await fetch(`${server.url}${path}`);
      const html = await res.text();
      if (res.status !== 200) throw new Error(`console ${path}: HTTP ${res.status}`);
      return `${Math.round(html.length / 1024)} KiB`;
    });
    out.push({ label, ...r });
  }
  return out;
}
