// Bench item `upgrade` (issue 32, "migrate from today's schema on a database that already holds 10
// million bills: bounded time"): N bills over K accounts generated at the schema before bill_rows
// (migrated up to 20261126200000_run_leases; the volume item's books, bench/volume-generate.ts),
// every account-month closed (its digest), then `migrate` timed as `ledger-sync migrate` runs it:
// the copy into bill_rows (src/store/migrate/copy-bills.ts), the count check, the swap migration,
// the closed periods' check through the view. Figures only: nothing is asserted.
//   npm run bench -- --only upgrade [--upgrade-bills 1000000] [--upgrade-accounts 20] [--upgrade-concurrency 2]
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { CLOSE_SEALS_MIGRATION, sealLegacyStep } from "../src/periods/seal-legacy.ts";
import { closesCheckStep } from "../src/periods/upgrade-closes-check.ts";
import { DIGEST_OF_LINES, PERIOD_LINES } from "../src/periods/digest.ts";
import { BILL_ROWS_MIGRATION, BILLS_VIEW_MIGRATION, dataSteps } from "../src/store/migrate/data-steps.ts";
import { migrateDeploy } from "../src/store/migrate/index.ts";
import { DEFAULT_MIGRATIONS_DIR, LOCKFILE_NAME } from "../src/store/migrate/migrations-dir.ts";
import { Cleanup } from "./cleanup.ts";
import { benchDatabase } from "./postgres.ts";
import { int, mb, type Row } from "./report.ts";
import { generateVolume, SPAN_FROM_MS, SPAN_TO_MS, type Generated } from "./volume-generate.ts";

export interface UpgradeOptions {
  bills: number;
  accounts: number;
  /** Accounts copied at once (copy-bills.ts's concurrency). */
  concurrency: number;
}

interface Phase {
  name: string;
  seconds: number;
}

export interface UpgradeResult extends UpgradeOptions {
  generated: Generated;
  closes: { count: number; seconds: number };
  /** The whole migrate, and its phases from the log's lines. */
  seconds: number;
  phases: Phase[];
  /** Bytes of the old table (heap and indexes) and of bill_rows (every partition, heap and indexes). */
  legacyBytes: number;
  billRowsBytes: number;
  forms: number;
}

const say = (text: string) => process.stderr.write(`upgrade: ${text}\n`);

/** The last migration of the release before issue 32's storage: the schema upgraded. */
const LAST_OLD_MIGRATION = "20261126200000_run_leases";

/** Applies the migrations up to it (a copy of the directory without the later ones). */
async function migrateToOldSchema(url: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "ls-bench-upgrade-"));
  try {
    for (const name of await readdir(DEFAULT_MIGRATIONS_DIR))
      if (name <= LAST_OLD_MIGRATION || name === LOCKFILE_NAME)
        await cp(join(DEFAULT_MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
    await migrateDeploy(url, { migrationsDir: dir });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// Every month of the span closed for account $1 as `close` seals it (digest and count; no figures).
const CLOSE_MONTH = `
INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                           bill_count, digest, figures, closed_by)
SELECT $1, $4, timestamptz 'epoch' + $2::bigint * interval '1 millisecond',
       timestamptz 'epoch' + $3::bigint * interval '1 millisecond', $2::bigint, $3::bigint,
       count(*)::int, ${DIGEST_OF_LINES}, '{}', 'bench'
FROM (${PERIOD_LINES}) l`;

async function closeEveryMonth(c: pg.Client): Promise<{ count: number; seconds: number }> {
  const started = performance.now();
  const accounts = (await c.query<{ name: string }>("SELECT DISTINCT account_name AS name FROM sync_state")).rows;
  let count = 0;
  for (const { name } of accounts)
    for (let from = new Date(SPAN_FROM_MS); from.getTime() < SPAN_TO_MS; count++) {
      const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
      const period = from.toISOString().slice(0, 7);
      await c.query(CLOSE_MONTH, [name, String(from.getTime()), String(to.getTime()), period]);
      from = to;
    }
  return { count, seconds: (performance.now() - started) / 1000 };
}

const PARTITIONS_BYTES = `
SELECT coalesce(sum(pg_total_relation_size(relid)), 0)::text AS bytes
FROM pg_partition_tree('bill_rows') WHERE isleaf`;

/** The phases of the migrate, between the log lines that start and end them. */
function phasesOf(lines: { at: number; line: string }[], started: number): Phase[] {
  const at = (needle: string) => lines.find((l) => l.line.includes(needle))?.at ?? Number.NaN;
  const marks: [string, string, string][] = [
    ["leases and progress rows", `data step of ${BILL_ROWS_MIGRATION}:`, "bills of "],
    ["copy into bill_rows", "bills of ", "by this run in"],
    ["count check per account, ANALYZE", "by this run in", "counted in bills and in bill_rows"],
    [
      "swap migration (count check under lock, view, triggers)",
      `data step of ${BILL_ROWS_MIGRATION} finished`,
      `applied migration ${BILLS_VIEW_MIGRATION}`,
    ],
    [
      "closed periods' digests through the view",
      `applied migration ${BILLS_VIEW_MIGRATION}`,
      `data step of ${BILLS_VIEW_MIGRATION} finished`,
    ],
    [
      "seal the closes made before the chain (Merkle root of each)",
      `data step of ${CLOSE_SEALS_MIGRATION}:`,
      `data step of ${CLOSE_SEALS_MIGRATION} finished`,
    ],
  ];
  const phases = marks.map(([name, from, to]) => ({ name, seconds: (at(to) - at(from)) / 1000 }));
  return [
    { name: "the migrations before the copy", seconds: (at(`data step of ${BILL_ROWS_MIGRATION}:`) - started) / 1000 },
    ...phases,
  ];
}

export async function upgradeBench(o: UpgradeOptions): Promise<UpgradeResult> {
  const scope = new Cleanup();
  try {
    const { url } = await benchDatabase(scope, { migrate: false });
    await migrateToOldSchema(url);
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    scope.add("close the upgrade connection", () => c.end());
    say(`generating ${int(o.bills)} bills over ${o.accounts} accounts at the old schema...`);
    const generated = await generateVolume(c, {
      bills: o.bills,
      accounts: o.accounts,
      order: "account",
      legacyTable: true,
    });
    const closes = await closeEveryMonth(c);
    const legacyBytes = Number(
      (await c.query<{ b: string }>("SELECT pg_total_relation_size('bills')::text AS b")).rows[0]!.b,
    );
    say(`${closes.count} periods closed; migrate...`);
    const lines: { at: number; line: string }[] = [];
    const log = (line: string) => {
      lines.push({ at: performance.now(), line });
      if (line.includes("bills upgrade:") || line.includes("applied")) say(line);
    };
    const steps = {
      ...dataSteps({ concurrency: o.concurrency }),
      [BILLS_VIEW_MIGRATION]: closesCheckStep(),
      [CLOSE_SEALS_MIGRATION]: sealLegacyStep(),
    };
    const started = performance.now();
    await migrateDeploy(url, { log, dataSteps: steps });
    const seconds = (performance.now() - started) / 1000;
    const billRowsBytes = Number((await c.query<{ bytes: string }>(PARTITIONS_BYTES)).rows[0]!.bytes);
    const forms = Number((await c.query<{ n: string }>("SELECT count(*)::text AS n FROM bill_forms")).rows[0]!.n);
    return { ...o, generated, closes, seconds, phases: phasesOf(lines, started), legacyBytes, billRowsBytes, forms };
  } finally {
    await scope.run();
  }
}

export function upgradeRows(r: UpgradeResult, note: string): Row[] {
  const g = r.generated;
  const perBill = (bytes: number) => `${(bytes / r.bills).toFixed(0)} B/bill (${mb(bytes)})`;
  return [
    [
      `**${int(r.bills)} bills${note}, ${r.accounts} accounts × a year, at the schema before bill_rows**`,
      `generated in ${g.seconds.toFixed(0)} s, VACUUM (ANALYZE) ${g.vacuumSeconds.toFixed(0)} s; ` +
        `${r.closes.count} account-months closed in ${r.closes.seconds.toFixed(0)} s`,
    ],
    [
      `\`migrate\` (concurrency ${r.concurrency}, batches of 100,000)`,
      `${r.seconds.toFixed(1)} s: **${int(r.bills / r.seconds)} bills/s** over the whole upgrade`,
    ],
    ...r.phases.map((p): Row => {
      const rate = p.name === "copy into bill_rows" ? `, ${int(r.bills / p.seconds)} bills/s` : "";
      return [`  ${p.name}`, `${p.seconds.toFixed(1)} s${rate}`];
    }),
    ["old `bills` (heap, TOAST, five indexes)", perBill(r.legacyBytes)],
    [`bill_rows (every partition, heap and indexes), ${r.forms} forms`, perBill(r.billRowsBytes)],
  ];
}

export const UPGRADE_METHOD = [
  "Books: the volume item's (bench/volume-generate.ts: N/K bills per account over 2025, raw as the v2 endpoint sends it, balances chained), written into a database migrated up to 20261126200000_run_leases, then VACUUM (ANALYZE); every account-month closed with the canonical digest of src/periods/digest.ts (rows of period_closes, no figures).",
  "Timed: `migrateDeploy` with the steps `ledger-sync migrate` runs (copy-bills.ts with the default batch of 100,000 and the given concurrency; the closed periods' check), from its start to its end, in this process. Phases from the times of its log lines: the bill_rows migration; taking the leases and filling bill_rows_upgrade; the copy (ledger order per account, one transaction per batch: ledger_sync_split_jsonb per bill, keys per batch); the count per account in both tables and ANALYZE; the swap migration; the digest of every closed period through the view; the seal of every close made before the chain (each closed period's lines read once, its Merkle root, one insert per close).",
  "bills/s = N ÷ seconds. Sizes: pg_total_relation_size of the old table, and of every leaf partition of bill_rows, right after the migrate (no VACUUM).",
];
