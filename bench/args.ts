// Command-line flags of `npm run bench`, parsed by commander as the CLI is. Defaults are the
// sizes of issue 8; --small is a quick preset for checking the harness (any explicit flag wins).
import { Command, InvalidArgumentError } from "commander";
import { VOLUME_ORDERS, type VolumeOrder } from "./volume-generate.ts";

export const ITEMS = [
  "ingest",
  "budget",
  "memory",
  "freshness",
  "scaling",
  "snapshots",
  "verify",
  "exchange-behaviours",
  "co-tenant",
  "migrate",
  "export",
  "rollups",
  "console-fleet",
  "volume",
  "round-trips",
  "upgrade",
] as const;
export type Item = (typeof ITEMS)[number];

export interface BenchArgs {
  only: Item[];
  /** Item 1, ingest: bills served and backfilled; rows of the per-row upsert loop. */
  bills: number;
  upsertRows: number;
  /** Item 2, budget: bills, and the weight budget (IP and UID alike) per window. */
  budgetBills: number;
  budgetWeight: number;
  budgetWindowMs: number;
  /** Item 3, memory: bills. */
  memoryBills: number;
  /** Item 4, freshness: BILLS_INTERVAL_MS and bills appended. */
  freshnessIntervalMs: number;
  freshnessAppends: number;
  /** Item 5, scaling: bills per account (4 accounts), and the process counts. */
  scalingBills: number;
  scalingProcesses: number[];
  /** Item 5, scaling: hours per backfill window job (`ledger-sync backfill --window-hours`, default 24). */
  scalingWindowHours: number;
  /** Snapshot cost rounds. */
  snapshotRounds: number;
  /** Verify cost: bills of history. */
  verifyBills: number;
  /** Exchange behaviours: bills of the main history (the span-limit row has its own sparse year). */
  behaviourBills: number;
  /** Co-tenant: bills, and the exchange's UID budget per window. */
  coTenantBills: number;
  coTenantWeight: number;
  coTenantWindowMs: number;
  /** Migrate: runs of the CLI (each on an empty, then an up-to-date database), and the CLI measured. */
  migrateRuns: number;
  migrateBin: string;
  /** Export: bills of the account exported. */
  exportBills: number;
  /** Rollups: bills of history at each size; bills of the ingest with and without rollups. */
  rollupsBills: number[];
  rollupsIngestBills: number;
  /** Volume: bills over accounts (a year each), accounts registered; keep the database, or use one. */
  volumeBills: number;
  volumeAccounts: number;
  volumeRegistered: number;
  volumeKeep: boolean;
  volumeDatabase: string | undefined;
  volumeOrder: VolumeOrder;
  volumeAsArrived: boolean;
  /** Upgrade: bills over accounts at the schema before bill_rows, and the copy's concurrency. */
  upgradeBills: number;
  upgradeAccounts: number;
  upgradeConcurrency: number;
  /** Write docs/benchmarks.md (default) or only print. */
  writeDoc: boolean;
}

const DEFAULTS: Omit<
  BenchArgs,
  "only" | "writeDoc" | "migrateBin" | "volumeKeep" | "volumeDatabase" | "volumeOrder" | "volumeAsArrived"
> = {
  bills: 200_000,
  upsertRows: 10_000,
  budgetBills: 50_000,
  budgetWeight: 100,
  budgetWindowMs: 1000,
  memoryBills: 1_000_000,
  freshnessIntervalMs: 2000,
  freshnessAppends: 10,
  scalingBills: 50_000,
  scalingProcesses: [1, 2, 4],
  scalingWindowHours: 24,
  snapshotRounds: 200,
  verifyBills: 1_000_000,
  behaviourBills: 20_000,
  coTenantBills: 20_000,
  coTenantWeight: 100,
  coTenantWindowMs: 1000,
  migrateRuns: 10,
  exportBills: 1_000_000,
  rollupsBills: [1_000_000, 10_000_000],
  rollupsIngestBills: 200_000,
  volumeBills: 10_000_000,
  volumeAccounts: 200,
  volumeRegistered: 10_000,
  upgradeBills: 1_000_000,
  upgradeAccounts: 20,
  upgradeConcurrency: 2,
};

const SMALL: Partial<BenchArgs> = {
  bills: 10_000,
  upsertRows: 2000,
  budgetBills: 5000,
  memoryBills: 20_000,
  freshnessAppends: 3,
  scalingBills: 5000,
  snapshotRounds: 20,
  verifyBills: 50_000,
  behaviourBills: 3000,
  coTenantBills: 3000,
  migrateRuns: 3,
  exportBills: 50_000,
  rollupsBills: [20_000, 100_000],
  rollupsIngestBills: 10_000,
  volumeBills: 100_000,
  volumeAccounts: 10,
  volumeRegistered: 1000,
  upgradeBills: 50_000,
  upgradeAccounts: 5,
};

type NumericKey = {
  [K in keyof typeof DEFAULTS]: (typeof DEFAULTS)[K] extends number ? K : never;
}[keyof typeof DEFAULTS];

const NUMERIC: Record<string, NumericKey> = {
  "--bills": "bills",
  "--upsert-rows": "upsertRows",
  "--budget-bills": "budgetBills",
  "--budget-weight": "budgetWeight",
  "--budget-window-ms": "budgetWindowMs",
  "--memory-bills": "memoryBills",
  "--freshness-interval-ms": "freshnessIntervalMs",
  "--freshness-appends": "freshnessAppends",
  "--scaling-bills": "scalingBills",
  "--scaling-window-hours": "scalingWindowHours",
  "--snapshot-rounds": "snapshotRounds",
  "--verify-bills": "verifyBills",
  "--behaviour-bills": "behaviourBills",
  "--co-tenant-bills": "coTenantBills",
  "--co-tenant-weight": "coTenantWeight",
  "--co-tenant-window-ms": "coTenantWindowMs",
  "--migrate-runs": "migrateRuns",
  "--export-bills": "exportBills",
  "--rollups-ingest-bills": "rollupsIngestBills",
  "--volume-bills": "volumeBills",
  "--volume-accounts": "volumeAccounts",
  "--volume-registered": "volumeRegistered",
  "--upgrade-bills": "upgradeBills",
  "--upgrade-accounts": "upgradeAccounts",
  "--upgrade-concurrency": "upgradeConcurrency",
};

const d = DEFAULTS;
export const USAGE = `npm run bench -- [--only ${ITEMS.join(",")}] [--small] [--no-doc]
  ingest:    --bills ${d.bills} --upsert-rows ${d.upsertRows}
  budget:    --budget-bills ${d.budgetBills} --budget-weight ${d.budgetWeight} --budget-window-ms ${d.budgetWindowMs}
  memory:    --memory-bills ${d.memoryBills}
  freshness: --freshness-interval-ms ${d.freshnessIntervalMs} --freshness-appends ${d.freshnessAppends}
  scaling:   --scaling-bills ${d.scalingBills} (per account, 4 accounts) --scaling-processes ${d.scalingProcesses.join(",")} --scaling-window-hours ${d.scalingWindowHours}
  snapshots: --snapshot-rounds ${d.snapshotRounds}
  verify:    --verify-bills ${d.verifyBills}
  exchange-behaviours: --behaviour-bills ${d.behaviourBills}
  co-tenant: --co-tenant-bills ${d.coTenantBills} --co-tenant-weight ${d.coTenantWeight} --co-tenant-window-ms ${d.coTenantWindowMs}
  migrate:   --migrate-runs ${d.migrateRuns} --migrate-bin bin/ledger-sync.js (another checkout's CLI for a before figure)
  export:    --export-bills ${d.exportBills}
  rollups:   --rollups-bills ${d.rollupsBills.join(",")} --rollups-ingest-bills ${d.rollupsIngestBills}
  volume:    --volume-bills ${d.volumeBills} --volume-accounts ${d.volumeAccounts} --volume-registered ${d.volumeRegistered} [--volume-order arrival|account] [--volume-as-arrived] [--volume-keep | --volume-database <url>]
  upgrade:   --upgrade-bills ${d.upgradeBills} --upgrade-accounts ${d.upgradeAccounts} --upgrade-concurrency ${d.upgradeConcurrency}
  (defaults shown; --small: ${Object.entries(SMALL)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ")}; --no-doc: print only)`;

function positive(flag: string, text: string): number {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n <= 0)
    throw new InvalidArgumentError(`${flag} must be a positive whole number`);
  return n;
}

/** The flags, parsed by commander: --small first, then every explicit flag over it. */
export function parseArgs(argv: string[]): BenchArgs {
  const program = new Command("bench")
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined })
    .option("--only <items>", "comma-separated items", (v: string) => {
      const items = v.split(",").filter(Boolean);
      const unknown = items.filter((x) => !(ITEMS as readonly string[]).includes(x));
      if (items.length === 0 || unknown.length > 0)
        throw new InvalidArgumentError(`--only takes a comma-separated list of ${ITEMS.join(", ")}`);
      return ITEMS.filter((x) => items.includes(x));
    })
    .option("--small", "small sizes")
    .option("--no-doc", "print only")
    .option("--migrate-bin <path>", "the CLI the migrate item runs")
    .option("--volume-keep", "keep the volume item's database and print its URL")
    .option("--volume-database <url>", "the volume item's database: generated where missing, never dropped")
    .option("--volume-as-arrived", "measure the volume item's months as written, without `storage compact` first")
    .option(
      "--volume-order <order>",
      "the order the volume item writes its bills: arrival (default) or account",
      (v: string) => {
        if (!(VOLUME_ORDERS as readonly string[]).includes(v))
          throw new InvalidArgumentError(`--volume-order takes ${VOLUME_ORDERS.join(" or ")}`);
        return v as VolumeOrder;
      },
    )
    .option("--scaling-processes <list>", "process counts", (v: string) =>
      v.split(",").map((p) => positive("--scaling-processes", p)),
    )
    .option("--rollups-bills <list>", "history sizes", (v: string) =>
      v.split(",").map((p) => positive("--rollups-bills", p)),
    );
  for (const [flag, key] of Object.entries(NUMERIC))
    program.option(`${flag} <n>`, key, (v: string) => positive(flag, v));
  try {
    program.parse(argv, { from: "user" });
  } catch (err) {
    throw new Error(`${(err as Error).message.replace(/^error: /, "")}\n${USAGE}`);
  }
  const o = program.opts<Record<string, unknown>>();
  const a: BenchArgs = {
    ...structuredClone(DEFAULTS),
    ...(o.small ? SMALL : {}),
    migrateBin: (o.migrateBin as string | undefined) ?? "bin/ledger-sync.js",
    volumeKeep: o.volumeKeep === true,
    volumeDatabase: o.volumeDatabase as string | undefined,
    volumeOrder: (o.volumeOrder as VolumeOrder | undefined) ?? "arrival",
    volumeAsArrived: o.volumeAsArrived === true,
    only: (o.only as Item[] | undefined) ?? [...ITEMS],
    writeDoc: o.doc !== false,
  };
  for (const key of Object.values(NUMERIC)) if (o[key] !== undefined) a[key] = o[key] as number;
  if (o.scalingProcesses !== undefined) a.scalingProcesses = o.scalingProcesses as number[];
  if (o.rollupsBills !== undefined) a.rollupsBills = o.rollupsBills as number[];
  return a;
}

/** "(issue: 200,000)" when a size differs from the issue's, so reduced runs are not mistaken for it. */
export function sizeNote(value: number, key: NumericKey): string {
  const d = DEFAULTS[key];
  return d !== value ? ` (full size: ${d.toLocaleString("en-US")})` : "";
}
