// Bench item `rollups` (issue 19): the BI views over daily_rollups against their old definitions
// over bills, for one account of 1,000,000 and 10,000,000 bills; and what keeping the rollups costs
// the ingest (rollups-ingest.ts). Goals: every query under 50 ms at 10,000,000 bills; the ingest's
// ratio to COPY with rollups at least 0.9 of the ratio without.
//   npm run bench -- --only rollups [--rollups-bills 1000000,10000000] [--rollups-ingest-bills 200000]
import pg from "pg";
import { migrateDeploy } from "../src/store/migrate/index.ts";
import { migrateBeforeRollups, oldViewsSql } from "../test/store/rollups/before-rollups.ts";
import { Cleanup } from "./cleanup.ts";
import { benchDatabase } from "./postgres.ts";
import { int, ratio, type Row } from "./report.ts";
import { ingestWithAndWithoutRollups, median, type IngestModes } from "./rollups-ingest.ts";
import { ACCOUNT, seedBills } from "./rollups-seed.ts";

/** What a BI tool asks: [label, view, filter]. The month and year end a month before the history. */
const QUERIES: [string, string, string][] = [
  ["v_daily_pnl, one month", "v_daily_pnl", "AND day >= '2026-09-01' AND day < '2026-10-01'"],
  ["v_daily_pnl, one year", "v_daily_pnl", "AND day >= '2025-10-01' AND day < '2026-10-01'"],
  ["v_daily_pnl, all time", "v_daily_pnl", ""],
  ["v_fees, all time", "v_fees", ""],
  ["v_funding, all time", "v_funding", ""],
  ["v_balances", "v_balances", ""],
];
/** Timed runs of each query, the median reported: fewer of the old views (seconds each at 10M). */
const RUNS = { before: 3, after: 7 };

export interface QueryTimes {
  label: string;
  rows: number;
  beforeMs: number;
  afterMs: number;
}

export interface SizeResult {
  bills: number;
  seedSeconds: number;
  /** The daily_rollups migration over the seeded bills: its back-fill, triggers and views. */
  migrateSeconds: number;
  rollupRows: number;
  queries: QueryTimes[];
}

export interface RollupsResult {
  sizes: SizeResult[];
  ingest: IngestModes;
}

export async function rollupsBench(o: { bills: number[]; ingestBills: number }): Promise<RollupsResult> {
  const sizes: SizeResult[] = [];
  for (const bills of o.bills) sizes.push(await atSize(bills));
  return { sizes, ingest: await ingestWithAndWithoutRollups(o.ingestBills) };
}

async function atSize(bills: number): Promise<SizeResult> {
  const scope = new Cleanup();
  try {
    const database = await benchDatabase(scope, { migrate: false });
    await migrateBeforeRollups(database.url);
    // Every value as text, as psql shows it: the time is the database's and the wire's, not
    // JavaScript's building of Date objects.
    const c = new pg.Client({ connectionString: database.url, types: { getTypeParser: () => (v: string) => v } });
    await c.connect();
    scope.add("close the rollups connection", () => c.end());
    for (const sql of await oldViewsSql()) await c.query(sql);
    let started = performance.now();
    await seedBills(c, bills);
    const seedSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    await migrateDeploy(database.url, { log: () => undefined });
    const migrateSeconds = (performance.now() - started) / 1000;
    await c.query("VACUUM ANALYZE rollup_rows");
    const rollupRows = Number((await c.query<{ n: string }>("SELECT count(*) AS n FROM daily_rollups")).rows[0]!.n);
    const queries: QueryTimes[] = [];
    for (const [label, view, filter] of QUERIES) {
      const sql = (name: string) => `SELECT * FROM ${name} WHERE account_name = $1 ${filter}`;
      const before = await timed(c, sql(`${view}_before`), RUNS.before);
      const after = await timed(c, sql(view), RUNS.after);
      if (after.rows !== before.rows) throw new Error(`${label}: ${after.rows} rows, before ${before.rows}`);
      queries.push({ label, rows: after.rows, beforeMs: before.ms, afterMs: after.ms });
    }
    return { bills, seedSeconds, migrateSeconds, rollupRows, queries };
  } finally {
    await scope.run();
  }
}

/** Median wall time of `runs` executions, all rows fetched; one untimed run first warms the cache. */
async function timed(c: pg.Client, sql: string, runs: number): Promise<{ ms: number; rows: number }> {
  let rows = (await c.query(sql, [ACCOUNT])).rowCount ?? 0;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    rows = (await c.query(sql, [ACCOUNT])).rowCount ?? 0;
    times.push(performance.now() - started);
  }
  return { ms: median(times), rows };
}

const ms = (x: number) => (x >= 100 ? `${int(x)} ms` : `${x.toFixed(1)} ms`);
const speedup = (x: number) => (x >= 10 ? `${int(x)}x` : ratio(x));

export function rollupsRows(r: RollupsResult, ingestNote: string): Row[] {
  const rows: Row[] = [];
  for (const s of r.sizes) {
    rows.push([
      `**${int(s.bills)} bills**`,
      `seeded and vacuumed in ${s.seedSeconds.toFixed(0)} s; the daily_rollups migration (back-fill, triggers, views) ${s.migrateSeconds.toFixed(1)} s; ${int(s.rollupRows)} rollup rows`,
    ]);
    for (const q of s.queries)
      rows.push([
        `${q.label} (${int(q.rows)} rows)`,
        `before ${ms(q.beforeMs)}, after ${ms(q.afterMs)} (${speedup(q.beforeMs / q.afterMs)} faster)${q.afterMs < 50 ? "" : " (goal < 50 ms missed)"}`,
      ]);
  }
  const i = r.ingest;
  const line = (m: IngestModes["with"]) =>
    `${ratio(median(m.ratios))} (pairs: ${m.ratios.map(ratio).join(", ")}); writing ${median(m.writeSeconds).toFixed(1)} s, PostgreSQL CPU ${median(m.postgresCpu).toFixed(1)} s`;
  rows.push(
    [`ingest of ${int(i.bills)} bills${ingestNote}, end-to-end / COPY, without rollups`, line(i.without)],
    [`ingest of ${int(i.bills)} bills${ingestNote}, end-to-end / COPY, with rollups`, line(i.with)],
    ["with ÷ without (goal >= 0.9)", `${(median(i.with.ratios) / median(i.without.ratios)).toFixed(2)}`],
  );
  return rows;
}

export const ROLLUPS_METHOD = [
  `History (bench/rollups-seed.ts): one account's bills over a fixed two years (2024-11-01 to 2026-11-01), written in one INSERT ... SELECT over generate_series (then VACUUM ANALYZE, so that no autovacuum runs while queries are timed) into a database migrated up to the migration before daily_rollups, next to the four views' old definitions (read from the bi_views migration, renamed \`<view>_before\`). Then the daily_rollups migration runs, timed, and back-fills the rollups as it would on a live database (then VACUUM ANALYZE daily_rollups). The span is the same at every size, so the rollup rows (days × coins × symbols × types) are too: 80% opens and closes, 12% funding, the rest fee income, liquidations and transfers, eight symbols per coin, one bill in ten in USDC.`,
  `Queries: \`SELECT * FROM <view> WHERE account_name = 'bench'\` plus the day filter shown, every row fetched over one pg connection with every value kept as text (as psql does); one untimed run, then the median of ${RUNS.before} runs (old definitions) and ${RUNS.after} runs (views over daily_rollups). Both must return the same number of rows; the tests (test/store/rollups) prove they return the same rows.`,
  "Ingest: the ingest item's backfill + COPY pair (bench/ingest-vs-copy.ts: the whole sandbox history through syncAccountBills into a fresh database, then COPY of the same rows into a copy of the table), three pairs with the rollup triggers and three with them disabled in that database, alternately. Ratio = end-to-end bills/s ÷ COPY bills/s; the median of each mode, every pair listed, and the medians of the time inside the bills write (writeSeconds) and of the PostgreSQL backends' CPU seconds.",
];
