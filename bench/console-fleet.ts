// Bench item `console-fleet` (issue 25): the console's accounts page at 1,000 accounts. A fresh
// database gets the fleet of the tests (test/console/fleet-fixture.ts: every state, registered and
// env-only accounts) with a realistic depth of rows: per account sync_state (bills, a snapshot
// stream, 30 backfill windows), verify_state with a report, 200 bills runs in sync_runs, 90 days of
// daily_rollups. The console serves it over loopback HTTP and each page is requested REQUESTS
// times after two untimed requests; p50 and p95 of the whole request (query, rendering, transfer).
// Goal: the accounts page under 200 ms at 1,000 accounts. The fleet query alone (readFleet) is
// timed the same way, for a page and for every account (what `status --json` reads).
//   npm run bench -- --only console-fleet [--no-doc]
import pg from "pg";
import { pino } from "pino";
import { startConsoleServer } from "../src/console/server.ts";
import { readFleet } from "../src/store/accounts/overview.ts";
import { createDb } from "../src/store/prisma.ts";
import { fleetSpec, seedFleet, STALE_AFTER_MS } from "../test/console/fleet-fixture.ts";
import { Cleanup } from "./cleanup.ts";
import { benchDatabase } from "./postgres.ts";
import { int, type Row } from "./report.ts";

export const CONSOLE_FLEET_ACCOUNTS = 1000;
const REQUESTS = 20;
const SIZES = { runs: 200, backfillWindows: 30, rollupDays: 90 };
const GOAL_MS = 200;

export interface Timing {
  label: string;
  p50: number;
  p95: number;
  /** Accounts listed (pages) or bytes (HTML), for the row's note. */
  note: string;
}

export interface ConsoleFleetResult {
  accounts: number;
  seedSeconds: number;
  rows: Record<string, number>;
  timings: Timing[];
}

/** p50 and p95 by nearest rank. */
function percentiles(ms: number[]): { p50: number; p95: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
  return { p50: rank(0.5), p95: rank(0.95) };
}

async function timed(label: string, run: () => Promise<string>): Promise<Timing> {
  for (let i = 0; i < 2; i++) await run();
  const ms: number[] = [];
  let note = "";
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    note = await run();
    ms.push(performance.now() - started);
  }
  return { label, ...percentiles(ms), note };
}

export async function consoleFleet(accounts = CONSOLE_FLEET_ACCOUNTS): Promise<ConsoleFleetResult> {
  const scope = new Cleanup();
  try {
    const database = await benchDatabase(scope);
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    scope.add("close the seeding connection", () => c.end());
    const spec = fleetSpec(accounts);
    let started = performance.now();
    await seedFleet(c, spec, { ...SIZES, nowMs: Date.now() });
    await c.query("VACUUM ANALYZE");
    const seedSeconds = (performance.now() - started) / 1000;
    const rows: Record<string, number> = {};
    for (const table of ["accounts", "sync_state", "verify_state", "sync_runs", "daily_rollups", "exchange_profiles"])
      rows[table] = Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);

    const fleet = { staleAfterMs: STALE_AFTER_MS, historyDays: 90, billsIntervalMs: 60_000 };
    const server = await startConsoleServer({
      host: "127.0.0.1",
      port: 0,
      token: undefined,
      databaseUrl: database.url,
      logger: pino({ level: "silent" }),
      fleet,
    });
    scope.add("stop the console", () => server.close());
    const page = (path: string) => async () => {
      const r = await fetch(`${server.url}${path}`);
      const html = await r.text();
      if (r.status !== 200) throw new Error(`${path}: HTTP ${r.status}`);
      const listed = (/<table id="accounts">[\s\S]*?<\/table>/.exec(html)?.[0].match(/<tr><td>/g) ?? []).length;
      return `${listed > 0 ? `${listed} accounts, ` : ""}${int(html.length / 1024)} KiB`;
    };
    const timings: Timing[] = [];
    started = performance.now();
    timings.push(await timed("accounts page, first page", page("")));
    timings.push(await timed("accounts page, last page", page(`?page=${Math.ceil(accounts / 50)}`)));
    timings.push(await timed("accounts page, state=stale", page("?state=stale")));
    timings.push(await timed("accounts page, name filter q=acct-05", page("?q=acct-05")));
    timings.push(await timed("account page (acct-0001)", page("accounts/acct-0001")));

    const db = createDb(database.url);
    scope.add("close the query client", () => db.$disconnect());
    const query = (limit: number | null) => async () => {
      const r = await readFleet(db, { limit, offset: 0, staleAfterMs: fleet.staleAfterMs, historyDays: 90 });
      return `${r.accounts.length} of ${r.total} accounts`;
    };
    timings.push(await timed("fleet query alone, 50 accounts", query(50)));
    timings.push(await timed("fleet query alone, every account (status --json)", query(null)));
    return { accounts, seedSeconds, rows, timings };
  } finally {
    await scope.run();
  }
}

const ms = (x: number) => `${x.toFixed(1)} ms`;

export function consoleFleetRows(r: ConsoleFleetResult): Row[] {
  return [
    [
      `**${int(r.accounts)} accounts**`,
      `seeded and vacuumed in ${r.seedSeconds.toFixed(1)} s: ${Object.entries(r.rows)
        .map(([t, n]) => `${t} ${int(n)}`)
        .join(", ")}`,
    ],
    ...r.timings.map((t): Row => {
      const goal = t.label.startsWith("accounts page") && t.p95 >= GOAL_MS ? ` (goal < ${GOAL_MS} ms missed)` : "";
      return [t.label, `p50 ${ms(t.p50)}, p95 ${ms(t.p95)} (${t.note})${goal}`];
    }),
  ];
}

export const CONSOLE_FLEET_METHOD = [
  `Fleet (test/console/fleet-fixture.ts): ${int(CONSOLE_FLEET_ACCOUNTS)} accounts, half registered in the accounts ` +
    "table and half known only by their rows; about a tenth failing for each reason (never synced, last verify " +
    "failed, last bills run failed), a sixth stale, a tenth of the registered disabled. Per synced account: " +
    `sync_state for bills, snapshots:2 and ${SIZES.backfillWindows} backfill windows; verify_state with a ` +
    `three-check report; ${SIZES.runs} bills runs and ${SIZES.runs / 5} snapshot runs in sync_runs; ` +
    `${SIZES.rollupDays} days × 3 business types of daily_rollups; a learnt history depth for a quarter. ` +
    "Then VACUUM ANALYZE.",
  `Each measure: two untimed requests, then ${REQUESTS} timed ones in a row; p50 and p95 by nearest rank of the ` +
    "wall time from the request to the last byte of the body (pages: `ledger-sync console`'s own server over " +
    "loopback HTTP, its read-only session settings included; the fleet query: readFleet over a pool of 4, rows " +
    "mapped to objects).",
  `Goal: the accounts page under ${GOAL_MS} ms at ${int(CONSOLE_FLEET_ACCOUNTS)} accounts. The page runs one ` +
    "query whatever the fleet's size (docs/design/fleet-views.md).",
];
