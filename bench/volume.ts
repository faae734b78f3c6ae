// Bench item `volume` (issue 32, "Reads at volume"): N bills over K accounts, a year each, generated
// by SQL into a migrated database (bench/volume-generate.ts), 10,000 accounts registered, then what
// each read costs at that volume, cold and warm (bench/volume-measure.ts), next to the issue's goals.
// Figures only: nothing is asserted.
//   npm run bench -- --only volume [--volume-bills 10000000] [--volume-accounts 200]
//     [--volume-registered 10000] [--volume-keep | --volume-database <url>] [--no-doc]
import { execFileSync } from "node:child_process";
import pg from "pg";
import { migrateDeploy } from "../src/store/migrate/index.ts";
import { compactMonth, compactRollups, dueMonths } from "../src/store/month-compaction.ts";
import { Cleanup } from "./cleanup.ts";
import { benchDatabase } from "./postgres.ts";
import { int, mb, type Row } from "./report.ts";
import { generateVolume, volumeAccounts, type Generated, type VolumeOrder } from "./volume-generate.ts";
import {
  coldWarm,
  exportRuns,
  fleetQueries,
  fleetReads,
  MONTH,
  msOf,
  seedVolumeFleet,
  statementRun,
  storage,
  verifyAccountRun,
  verifyAllRun,
  type ColdWarm,
  type ExportFigures,
  type FleetFigures,
  type QueryFigures,
  type StatementFigures,
  type Storage,
  type VerifyAllFigures,
  type VerifyFigures,
} from "./volume-measure.ts";

export interface VolumeOptions {
  bills: number;
  accounts: number;
  /** Accounts in the accounts table (the volume accounts among them). */
  registered: number;
  /** The order the bills are written in (bench/volume-generate.ts). */
  order: VolumeOrder;
  /** Measure the months as written, without `storage compact` first. */
  asArrived?: boolean;
}

export interface VolumeResult extends VolumeOptions {
  generated: Generated;
  /** `storage compact` of every past month before the measures (null: --volume-as-arrived). */
  compaction: { months: number; seconds: number; before: Storage } | null;
  /** Seconds to register the fleet (null: it was registered already). */
  fleetSeconds: number | null;
  sharedBuffers: string;
  storage: Storage;
  statement: ColdWarm<StatementFigures> & { account: string; month: string };
  exports: ExportFigures[];
  verifyAccount: ColdWarm<VerifyFigures> & { account: string };
  queries: QueryFigures[];
  fleet: FleetFigures[];
  verifyAll: { cold: VerifyAllFigures & { seconds: number }; warm: VerifyAllFigures & { seconds: number } };
}

const progressLine = (text: string) => process.stderr.write(`volume: ${text}\n`);

/** Calls `say` at most every `everyMs`, and always for the last step. */
function throttled(everyMs: number, say: (text: string) => void) {
  let last = 0;
  return (text: string, final: boolean) => {
    const now = performance.now();
    if (final || now - last >= everyMs) {
      last = now;
      say(text);
    }
  };
}

/**
 * Generates the books in `url` (a migrated database; what is there already is kept), registers the
 * fleet, and measures. Every connection it opens is closed by `scope`.
 */
export async function measureVolume(
  url: string,
  o: VolumeOptions,
  scope: Cleanup,
  say: (text: string) => void = () => undefined,
): Promise<VolumeResult> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  scope.add("close the volume connection", () => c.end());
  const names = volumeAccounts(o.accounts);
  const tell = throttled(10_000, say);
  const generated = await generateVolume(c, {
    ...o,
    onProgress: (p) =>
      tell(
        `${p.phase ?? "generated"} ${p.accountsDone}/${o.accounts} accounts, ${int(p.billsWritten)} bills in ` +
          `${p.seconds.toFixed(0)} s (${int(p.billsWritten / p.seconds)} bills/s)`,
        p.phase === undefined ? p.accountsDone === o.accounts : p.phase.startsWith("loaded"),
      ),
  });
  // The past months compacted as `ledger-sync storage compact` does, unless measured as written.
  let compaction: VolumeResult["compaction"] = null;
  if (!o.asArrived) {
    const before = await storage(c);
    const due = await dueMonths(c, Date.now());
    const started = performance.now();
    for (const p of due) {
      await compactMonth(c, p);
      say(`compacted ${p.month}`);
    }
    if (due.length > 0) await compactRollups(c);
    compaction = { months: due.length, seconds: (performance.now() - started) / 1000, before };
  }
  const fleetSeconds = await seedVolumeFleet(c, { volumeAccounts: names, registered: o.registered });
  await settle(c, say);
  const [settings] = (await c.query<{ shared_buffers: string }>("SHOW shared_buffers")).rows;
  const s = await storage(c);
  if (s.bills !== o.bills) throw new Error(`volume: the database holds ${s.bills} bills, not ${o.bills}`);
  // A different account for each measure, so that one measure's reads do not warm the next one's
  // cold run (the last accounts generated are the likeliest in shared buffers: these are the first).
  const pick = (k: number) => names[k % names.length]!;
  say("statement, export, verify of one account...");
  const statement = {
    account: pick(1),
    month: MONTH,
    ...(await coldWarm(statementRun(url, pick(1), MONTH, scope))),
  };
  const exports = await exportRuns(
    url,
    [
      { format: "jsonl", account: pick(2) },
      { format: "ledger-csv", account: pick(3) },
    ],
    scope,
  );
  const verifyAccount = { account: pick(4), ...(await coldWarm(verifyAccountRun(url, pick(4), scope))) };
  say("BI views, ad-hoc report...");
  const queries = await fleetQueries(url, scope);
  say("status and console...");
  const fleet = await fleetReads(url, pick(5), scope);
  // Twice on one client, each run with its own figures: cold, then warm.
  const step = throttled(10_000, say);
  const verifyAll = verifyAllRun(url, scope, (done, of) => step(`verify: ${done}/${of} accounts`, done === of));
  const timedVerifyAll = async () => {
    const { ms, value } = await msOf(verifyAll);
    return { ...value, seconds: ms / 1000 };
  };
  const cold = await timedVerifyAll();
  const warm = await timedVerifyAll();
  return {
    ...o,
    generated,
    compaction,
    fleetSeconds,
    sharedBuffers: settings!.shared_buffers,
    storage: s,
    statement,
    exports,
    verifyAccount,
    queries,
    fleet,
    verifyAll: { cold, warm },
  };
}

export interface VolumeRun extends VolumeOptions {
  /** Keep the fresh database (print its URL) instead of dropping it. */
  keep: boolean;
  /** Use this database (created by you or kept by --volume-keep): migrated, generated where missing, never dropped. */
  databaseUrl: string | undefined;
}

export async function volumeBench(o: VolumeRun): Promise<VolumeResult> {
  const scope = new Cleanup();
  try {
    let url = o.databaseUrl;
    if (url === undefined) {
      // A kept database's drop step sits in a scope that only Ctrl-C runs.
      const database = await benchDatabase(o.keep ? new Cleanup() : scope);
      url = database.url;
      if (o.keep) progressLine(`keeping the database: ${url} (measure it again with --volume-database ${url})`);
    } else await migrateDeploy(url, { log: () => undefined });
    return await measureVolume(url, o, scope, progressLine);
  } finally {
    await scope.run();
  }
}

// ---- the table

const GOALS = {
  bytesPerBill: 250,
  statementMs: 200,
  exportRowsPerSecond: 200_000,
  verifyAccountSeconds: 2,
  fleetMs: 300,
  biMonthMs: 1000,
  verifyBillsPerSecond: 1_000_000,
};

const ms = (x: number) => (x >= 100 ? `${int(x)} ms` : `${x.toFixed(1)} ms`);
const perBill = (bytes: number, bills: number) => `${(bytes / bills).toFixed(0)} B/bill`;

/** "goal ≤ 200 ms: met", "NOT met", or which of cold and warm met it. */
function verdict(goal: string, cold: boolean, warm = cold): string {
  const word =
    cold && warm ? "met" : !cold && !warm ? "NOT met" : warm ? "met warm, NOT met cold" : "met cold, NOT met warm";
  return `goal ${goal}: ${word}`;
}

function timesRow(r: { coldMs: number; warmMs: number }, goalMs: number): string {
  return `cold ${ms(r.coldMs)}, warm ${ms(r.warmMs)}; ${verdict(`≤ ${int(goalMs)} ms`, r.coldMs <= goalMs, r.warmMs <= goalMs)}`;
}

const outcome = (f: VerifyFigures) =>
  f.ok
    ? "verify: pass"
    : `verify: FAIL (${f.failing.length} failing: ${f.failing.slice(0, 3).join("; ")}${f.failing.length > 3 ? "; ..." : ""})`;

export function volumeRows(r: VolumeResult, note: string): Row[] {
  const g = r.generated;
  const s = r.storage;
  const generation =
    g.accountsWritten === 0
      ? "already generated (--volume-database)"
      : `generated in ${g.seconds.toFixed(0)} s (${int(g.billsWritten / g.seconds)} bills/s, triggers included)` +
        `${g.accountsWritten < r.accounts ? ` for ${g.accountsWritten} accounts, the others already there` : ""}`;
  const rows: Row[] = [
    [
      `**${int(r.bills)} bills${note}, ${int(r.accounts)} accounts × a year, written in ${r.order} order**`,
      `${generation}; VACUUM (ANALYZE) ${g.vacuumSeconds.toFixed(0)} s; ` +
        `${int(Math.max(r.registered, r.accounts))} accounts registered` +
        `${r.fleetSeconds === null ? "" : ` in ${r.fleetSeconds.toFixed(0)} s`}; shared_buffers ${r.sharedBuffers}`,
    ],
    ...(r.compaction === null
      ? [["past months compacted (`storage compact`)", "no: measured as written (--volume-as-arrived)"] as Row]
      : [
          [
            "past months compacted (`storage compact`)",
            `${r.compaction.months} month(s) in ${r.compaction.seconds.toFixed(0)} s; bytes per bill before: ` +
              `${perBill(r.compaction.before.totalBytes, r.compaction.before.bills)} (bill_rows indexes ` +
              `${r.compaction.before.indexes.map((i) => `${i.name} ${perBill(i.bytes, r.compaction!.before.bills)}`).join(", ")})`,
          ] as Row,
        ]),
    [
      "bytes per bill, all-in (bills + bill_revisions + rollups)",
      `${perBill(s.totalBytes, s.bills)} (${s.tables.map((t) => `${t.name} ${mb(t.bytes)}`).join(", ")}); ` +
        verdict(`≤ ${GOALS.bytesPerBill} B`, s.totalBytes / s.bills <= GOALS.bytesPerBill),
    ],
    ["  bills heap (table and TOAST)", `${perBill(s.billsHeapBytes, s.bills)} (${mb(s.billsHeapBytes)})`],
    ...s.indexes.map((i): Row => [`  index ${i.name}`, `${perBill(i.bytes, s.bills)} (${mb(i.bytes)})`]),
    [
      `statement, one account-month (${r.statement.account} ${r.statement.month}, ${int(r.statement.value.bills)} bills)`,
      `${timesRow(r.statement, GOALS.statementMs)}; chain ${r.statement.value.chainOk ? "ties" : "DOES NOT tie"}`,
    ],
    ...r.exports.map((e): Row => {
      const cold = e.bills / e.cold.seconds;
      const warm = e.bills / e.warm.seconds;
      return [
        `export, one account-year, --format ${e.format} (${e.account}, ${int(e.bills)} rows)`,
        `cold ${int(cold)} rows/s (${e.cold.seconds.toFixed(2)} s), warm ${int(warm)} rows/s (${e.warm.seconds.toFixed(2)} s); ` +
          verdict(
            `≥ ${int(GOALS.exportRowsPerSecond)} rows/s`,
            cold >= GOALS.exportRowsPerSecond,
            warm >= GOALS.exportRowsPerSecond,
          ),
      ];
    }),
    [
      `verify, one account-year (${r.verifyAccount.account}, ${int(r.verifyAccount.value.bills)} bills)`,
      `cold ${(r.verifyAccount.coldMs / 1000).toFixed(2)} s, warm ${(r.verifyAccount.warmMs / 1000).toFixed(2)} s; ` +
        `${verdict(`≤ ${GOALS.verifyAccountSeconds} s`, r.verifyAccount.coldMs <= GOALS.verifyAccountSeconds * 1000, r.verifyAccount.warmMs <= GOALS.verifyAccountSeconds * 1000)}; ` +
        outcome(r.verifyAccount.value),
    ],
    ...r.fleet.map((f): Row => [`${f.label}: ${f.value}`, timesRow(f, GOALS.fleetMs)]),
    ...r.queries.map((q): Row => [`${q.label}: ${int(q.value)} rows`, timesRow(q, GOALS.biMonthMs)]),
  ];
  for (const [run, v] of [
    ["cold", r.verifyAll.cold],
    ["warm", r.verifyAll.warm],
  ] as const) {
    const rate = v.bills / v.seconds;
    rows.push([
      `verify, every account (${int(v.accounts)} accounts, ${int(v.bills)} bills), ${run}`,
      `${v.seconds.toFixed(1)} s, ${int(rate)} bills/s on one connection; peak RSS ${mb(v.peakRss)} (${mb(v.rssBefore)} before); ` +
        `${verdict(`≥ ${int(GOALS.verifyBillsPerSecond)} bills/s/core`, rate >= GOALS.verifyBillsPerSecond)}; ` +
        outcome(v),
    ]);
  }
  return rows;
}

export const VOLUME_METHOD = [
  "Books (bench/volume-generate.ts): K accounts (acct-0000, ...), N/K bills each spread evenly over 2025-01-01 to 2026-01-01 UTC, one bill in ten in the same millisecond as the one before; the mix of bench/rollups-seed.ts (80% opens and closes, 12% funding, the rest fee income, liquidations and transfers; USDT over eight symbols, one bill in ten in USDC; amounts of 2 to 6 decimals, trade fees of 0.06%; raw as the v2 endpoint sends it, about 210 bytes). Balances chain per coin in ledger order from 0 (balance = previous + amount, fees inside the amounts: verify's plain rule). Bill ids: (ms since 2020) × 2^22 + a sequence, unique and increasing with time. Written into a freshly migrated database through loadBills (so the guard and rollup triggers run) in one of two orders (--volume-order): `arrival` (the default), as a fleet's syncs write them: every account generated whole into an unlogged stage, then each month loaded in one transaction in time order across all accounts, so an account's rows are spread over the month's heap and its keys arrive one at a time inside the indexes; `account`: one INSERT ... SELECT per account, with its bills cursor in the same transaction, each account's rows together and every index appended at its end (the layout `storage compact` gives a past month). Then VACUUM (ANALYZE). bills/s = bills ÷ the inserts' time. Then every past month is compacted as `ledger-sync storage compact` does (src/store/month-compaction.ts: CLUSTER on the primary key, indexes packed, then the rollups' indexes rebuilt), as an operator's monthly run leaves them, and the measures are of the compacted months; --volume-as-arrived measures the months as written instead.",
  "Fleet: the volume accounts plus the console fleet of test/console/fleet-fixture.ts up to 10,000 accounts, all in the accounts table, with bench/console-fleet.ts's rows per account (sync_state, 30 backfill windows, verify_state, 200 bills runs, quarantine) but no rollups (those accounts have no bills).",
  "Each figure is the time inside this process of the in-process function the command runs (no node start-up): `statement` = resolveAccount + buildStatement + the text rendering; `export` = runExport to a file in a temporary directory (rows/s = bills ÷ time); `verify --account` = verifyAccount with the default SYNC_LOOKBACK_MS and now = the bills cursor, no exchange; `verify` = the CLI's loop (its DISTINCT account list, then verifyAccount per account on one client), peak RSS = the highest process.memoryUsage().rss sampled every 10 ms; `status` = readFleet with the default settings; console = GET over loopback HTTP from `ledger-sync console`'s own server; BI views = `SELECT * FROM <view>` with a month's filter where the view has a day or a time, every row fetched as text over one pg connection.",
  "Before the measures the machine is let settle: CHECKPOINT, the kernel's sync, and autovacuum's visits to the new partitions waited for (at most 3 minutes). Cold = a measure's first run after the books were generated (statement, export, verify, the views and status each on a connection opened for it, its opening included; each measure on a different account, the first ones generated, likeliest out of shared_buffers). Warm = the second run, right after. The OS page cache cannot be dropped without root, so cold means out of PostgreSQL's shared_buffers at most, not off the disk.",
  "Goals are the issue's; a verdict is printed, nothing is asserted. verify bills/s is on one connection, one account after another (one core of PostgreSQL's and node's).",
];

/**
 * Lets the machine finish what the load left it before the cold measures, so that it does not share
 * the two cores with them: the dirty buffers of millions of rows written out (CHECKPOINT, then the
 * kernel's own `sync`) and autovacuum's visits to the new partitions. Waits at most SETTLE_MS for
 * autovacuum.
 */
async function settle(c: pg.Client, say: (line: string) => void): Promise<void> {
  const started = performance.now();
  await c.query("CHECKPOINT");
  execFileSync("sync");
  const busy = async () =>
    (
      await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE backend_type = 'autovacuum worker' AND datname = current_database()`,
      )
    ).rows[0]!.n;
  while ((await busy()) > 0 && performance.now() - started < SETTLE_MS)
    await new Promise((resolve) => setTimeout(resolve, 500));
  say(`settled in ${((performance.now() - started) / 1000).toFixed(0)} s (checkpoint, sync, autovacuum)`);
}

const SETTLE_MS = 180_000;
