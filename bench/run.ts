// `npm run bench`: issue 8's figures (never asserted on). Prints a table per item and records each
// in docs/benchmarks.md, keeping the sections of items not run.
//   npm run bench                                   every item at the sizes
//   npm run bench -- --only ingest,budget --bills 20000
//   npm run bench -- --small --no-doc               quick check of the harness
//   npm run bench -- --only fleet --scenario 1k     the fleet items (bench/fleet.ts), only when named
// Databases: BENCH_DATABASE_URL / TEST_DATABASE_URL (admin URL), else an embedded PostgreSQL.
// Redis (for the workers of freshness and scaling): BENCH_REDIS_URL / TEST_REDIS_URL, else a local redis-server.
import { parseArgs, sizeNote, type BenchArgs, type Item } from "./args.ts";
import { budgetEfficiency, budgetRowsBySource, BUDGET_METHOD } from "./budget.ts";
import { cleanupOnSignals, runScope } from "./cleanup.ts";
import { coTenant, CO_TENANT_METHOD, coTenantRows } from "./co-tenant.ts";
import { CONSOLE_FLEET_METHOD, consoleFleet, consoleFleetRows } from "./console-fleet.ts";
import { BEHAVIOURS_METHOD, behaviourRows, exchangeBehaviours } from "./exchange-behaviours.ts";
import { EXPORT_METHOD, exportCost, exportRows } from "./export-cost.ts";
import { isFleetRun, runFleet } from "./fleet.ts";
import { freshness, freshnessRows, FRESHNESS_METHOD } from "./freshness.ts";
import { INGEST_METHOD, ingestRows, ingestVsCopy } from "./ingest-vs-copy.ts";
import { machineLine } from "./machine.ts";
import { MEMORY_METHOD, memoryOfBackfill, memoryRows } from "./memory.ts";
import { MIGRATE_METHOD, migrateCost, migrateRows } from "./migrate-cost.ts";
import { printSection, updateDocument, type Row, type Section } from "./report.ts";
import { rollupsBench, ROLLUPS_METHOD, rollupsRows } from "./rollups.ts";
import { scaling, SCALING_METHOD, scalingRows } from "./scaling.ts";
import { SNAPSHOT_METHOD, snapshotCost, snapshotRows } from "./snapshots.ts";
import { VERIFY_METHOD, verifyCost, verifyRows } from "./verify-cost.ts";
import { volumeBench, VOLUME_METHOD, volumeRows } from "./volume.ts";
import { roundTrips, ROUND_TRIPS_METHOD, roundTripsRows } from "./round-trips.ts";
import { upgradeBench, UPGRADE_METHOD, upgradeRows } from "./upgrade.ts";

type Runner = (a: BenchArgs) => Promise<{ title: string; rows: Row[]; method: string[] }>;

const RUNNERS: Record<Item, Runner> = {
  ingest: async (a) => ({
    title: "1. Ingest vs COPY (and where the time goes)",
    rows: ingestRows(await ingestVsCopy({ bills: a.bills, upsertRows: a.upsertRows }), sizeNote(a.bills, "bills")),
    method: INGEST_METHOD,
  }),
  budget: async (a) => {
    const o = { bills: a.budgetBills, weight: a.budgetWeight, windowMs: a.budgetWindowMs };
    const results = [await budgetEfficiency({ ...o, source: "v2" }), await budgetEfficiency({ ...o, source: "v3" })];
    return {
      title: "2. Budget efficiency (v2 and v3 sources)",
      rows: budgetRowsBySource(results, sizeNote(a.budgetBills, "budgetBills")),
      method: BUDGET_METHOD,
    };
  },
  memory: async (a) => ({
    title: "3. Memory",
    rows: memoryRows(await memoryOfBackfill(a.memoryBills), sizeNote(a.memoryBills, "memoryBills")),
    method: MEMORY_METHOD,
  }),
  freshness: async (a) => ({
    title: "4. Freshness",
    rows: freshnessRows(
      await freshness({ intervalMs: a.freshnessIntervalMs, appends: a.freshnessAppends }),
      sizeNote(a.freshnessAppends, "freshnessAppends"),
    ),
    method: FRESHNESS_METHOD,
  }),
  scaling: async (a) => ({
    title: "5. Scaling",
    rows: scalingRows(
      await scaling(a.scalingBills, a.scalingProcesses, a.scalingWindowHours),
      sizeNote(a.scalingBills, "scalingBills"),
    ),
    method: SCALING_METHOD,
  }),
  snapshots: async (a) => ({
    title: "Snapshots",
    rows: snapshotRows(await snapshotCost(a.snapshotRounds), sizeNote(a.snapshotRounds, "snapshotRounds")),
    method: SNAPSHOT_METHOD,
  }),
  verify: async (a) => ({
    title: "Verify",
    rows: verifyRows(await verifyCost(a.verifyBills), sizeNote(a.verifyBills, "verifyBills")),
    method: VERIFY_METHOD,
  }),
  "exchange-behaviours": async (a) => ({
    title: "Exchange behaviours: requests per behaviour against an honest exchange (issue 14)",
    rows: behaviourRows(
      await exchangeBehaviours({ bills: a.behaviourBills }),
      a.behaviourBills,
      sizeNote(a.behaviourBills, "behaviourBills"),
    ),
    method: BEHAVIOURS_METHOD,
  }),
  "co-tenant": async (a) => {
    const o = { bills: a.coTenantBills, uidWeight: a.coTenantWeight, windowMs: a.coTenantWindowMs };
    return {
      title: "Co-tenant: sharing the API key's budget with another client (issue 15)",
      rows: coTenantRows(await coTenant(o), o, sizeNote(a.coTenantBills, "coTenantBills")),
      method: CO_TENANT_METHOD,
    };
  },
  migrate: async (a) => ({
    title: "Migrate: the CLI's start-up time and memory (issue 17)",
    rows: migrateRows(await migrateCost(a.migrateRuns, a.migrateBin), sizeNote(a.migrateRuns, "migrateRuns")),
    method: MIGRATE_METHOD,
  }),
  export: async (a) => ({
    title: "Export: rate and memory of `ledger-sync export` (issue 18)",
    rows: exportRows(await exportCost(a.exportBills), sizeNote(a.exportBills, "exportBills")),
    method: EXPORT_METHOD,
  }),
  rollups: async (a) => ({
    title: "Rollups: the BI views over daily_rollups, and what keeping them costs the ingest (issue 19)",
    rows: rollupsRows(
      await rollupsBench({ bills: a.rollupsBills, ingestBills: a.rollupsIngestBills }),
      sizeNote(a.rollupsIngestBills, "rollupsIngestBills"),
    ),
    method: ROLLUPS_METHOD,
  }),
  "console-fleet": async () => ({
    title: "Console fleet: the accounts page and status's fleet query at 1,000 accounts (issue 25)",
    rows: consoleFleetRows(await consoleFleet()),
    method: CONSOLE_FLEET_METHOD,
  }),
  volume: async (a) => ({
    title: "Volume: reads at N bills over K accounts, a fleet of accounts registered (issue 32)",
    rows: volumeRows(
      await volumeBench({
        bills: a.volumeBills,
        accounts: a.volumeAccounts,
        registered: a.volumeRegistered,
        keep: a.volumeKeep,
        databaseUrl: a.volumeDatabase,
        order: a.volumeOrder,
        asArrived: a.volumeAsArrived,
      }),
      sizeNote(a.volumeBills, "volumeBills"),
    ),
    method: VOLUME_METHOD,
  }),
  "round-trips": async () => ({
    title: "Round trips: PostgreSQL statements of a quiet account's bills job (issue 32)",
    rows: roundTripsRows(await roundTrips()),
    method: ROUND_TRIPS_METHOD,
  }),
  upgrade: async (a) => ({
    title: "Upgrade: `migrate` of a populated database to partitioned bills (issue 32)",
    rows: upgradeRows(
      await upgradeBench({ bills: a.upgradeBills, accounts: a.upgradeAccounts, concurrency: a.upgradeConcurrency }),
      sizeNote(a.upgradeBills, "upgradeBills"),
    ),
    method: UPGRADE_METHOD,
  }),
};

cleanupOnSignals();
// The fleet items (fleet, fleet-1k, fleet-backfill, fleet-10k, fleet-faults: bench/fleet.ts) take
// their own flags and only print; they run only when named (`--only fleet --scenario 1k`).
if (isFleetRun(process.argv.slice(2))) process.exit(await runFleet(process.argv.slice(2)));
let args: BenchArgs;
try {
  args = parseArgs(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
const command = ["npm run bench", ...(process.argv.length > 2 ? ["--", ...process.argv.slice(2)] : [])].join(" ");
const sections: Section[] = [];
const failures: string[] = [];
try {
  for (const item of args.only) {
    const machine = await machineLine();
    const started = performance.now();
    process.stderr.write(`bench: ${item}...\n`);
    try {
      const r = await RUNNERS[item](args);
      const section: Section = { id: item, command, machine, ...r };
      printSection(section);
      process.stdout.write(`  (${item} took ${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
      sections.push(section);
    } catch (err) {
      // One item failing does not lose the others' figures.
      failures.push(`${item}: ${(err as Error).stack ?? String(err)}`);
      process.stderr.write(`bench: ${item} failed: ${(err as Error).message}\n`);
    }
  }
  if (args.writeDoc && sections.length > 0) {
    updateDocument("docs/benchmarks.md", sections);
    process.stdout.write(`\nwrote ${sections.map((s) => s.id).join(", ")} to docs/benchmarks.md\n`);
  }
} finally {
  await runScope.run();
}
if (failures.length > 0) {
  process.stderr.write(`\n${failures.length} item(s) failed:\n${failures.join("\n\n")}\n`);
  process.exitCode = 1;
}
