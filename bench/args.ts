// Command-line flags of `npm run bench`. Defaults are the sizes of issue 8; --small is a quick
// preset for checking the harness (any explicit flag still wins).
export const ITEMS = ["ingest", "budget", "memory", "freshness", "scaling", "snapshots", "verify", "exchange-behaviours", "co-tenant"] as const;
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
  /** Write docs/benchmarks.md (default) or only print. */
  writeDoc: boolean;
}

const DEFAULTS: Omit<BenchArgs, "only" | "writeDoc"> = {
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
};

type NumericKey = { [K in keyof typeof DEFAULTS]: (typeof DEFAULTS)[K] extends number ? K : never }[keyof typeof DEFAULTS];

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
  (defaults shown; --small: ${Object.entries(SMALL).map(([k, v]) => `${k} ${v}`).join(", ")}; --no-doc: print only)`;

function positive(flag: string, text: string | undefined): number {
  const n = Number(text);
  if (text === undefined || !/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n <= 0) throw new Error(`${flag} must be a positive whole number\n${USAGE}`);
  return n;
}

export function parseArgs(argv: string[]): BenchArgs {
  const a: BenchArgs = { ...structuredClone(DEFAULTS), only: [...ITEMS], writeDoc: true };
  if (argv.includes("--small")) Object.assign(a, SMALL);
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const key = NUMERIC[flag];
    if (key) {
      a[key] = positive(flag, argv[++i]);
    } else if (flag === "--only") {
      const items = (argv[++i] ?? "").split(",").filter(Boolean);
      const unknown = items.filter((x) => !(ITEMS as readonly string[]).includes(x));
      if (items.length === 0 || unknown.length > 0) throw new Error(`--only takes a comma-separated list of ${ITEMS.join(", ")}\n${USAGE}`);
      a.only = ITEMS.filter((x) => items.includes(x));
    } else if (flag === "--scaling-processes") {
      a.scalingProcesses = (argv[++i] ?? "").split(",").map((p) => positive(flag, p));
    } else if (flag === "--small") {
      // applied above, before the explicit flags
    } else if (flag === "--no-doc") {
      a.writeDoc = false;
    } else {
      throw new Error(`unknown flag ${flag}\n${USAGE}`);
    }
  }
  return a;
}

/** "(issue: 200,000)" when a size differs from the issue's, so reduced runs are not mistaken for it. */
export function sizeNote(value: number, key: NumericKey): string {
  const d = DEFAULTS[key];
  return d !== value ? ` (full size: ${d.toLocaleString("en-US")})` : "";
}
