// Item exchange-behaviours (issue 14): what each behaviour of a real exchange costs in requests.
// The same history is synced against an honest sandbox and against a sandbox with one behaviour
// switched on (src/sandbox/README.md "Behaviours of real exchanges"), each into its own account of
// a fresh database; requests are the bills requests the sandbox received (refused and retried ones
// included). Goal (issue 14): no behaviour costs more than 1.5x an honest exchange at the same
// page size. Printed, never asserted.
//   npm run bench -- --only exchange-behaviours --behaviour-bills 20000
import { pino } from "pino";
import { BILLS_MAX_LIMIT } from "../src/exchange/bills-endpoint.ts";
import { startSandbox, type SandboxOptions } from "../src/sandbox/index.ts";
import { createDb, type Db } from "../src/store/prisma.ts";
import { syncAccountBills } from "../src/streams/bills/index.ts";
import { Cleanup } from "./cleanup.ts";
import { unbudgetedSandboxClient } from "./sandbox-client.ts";
import { benchDatabase } from "./postgres.ts";
import { int, ratio, type Row } from "./report.ts";

const DAY_MS = 86_400_000;
/** The sparse year of the span-limit row (issue 14: "sparse year with a 1-day span limit"). */
export const SPARSE_YEAR_BILLS = 400;
/** A run is stopped (every further request answered 500) past this many requests or seconds. */
const WATCHDOG = { requestsPerPage: 30, minRequests: 3000, seconds: 600 };

export interface BehavioursOptions {
  /** Bills of the main history (120 days; the unknown-types row adds two bursts of 150 bills in one millisecond). */
  bills: number;
}

/** One sync: what it cost and whether the copy is whole. */
export interface SyncCost {
  requests: number;
  seconds: number;
  /** "exact", "unverified: ...", "N of M missing", or "failed: <message>" / "stopped: <why>". */
  outcome: string;
  /** The copy is whole (exact, or missing bills only where the run said so). */
  whole: boolean;
}

export interface BehaviourResult {
  behaviour: string;
  cost: SyncCost;
  baseline: { what: string; cost: SyncCost };
  /** The least any client needs: ceil(bills ÷ page size), or (span limit) the windows it forces, whichever is more. */
  floor: { what: string; requests: number };
}

interface Run {
  account: string;
  sandbox: SandboxOptions;
  /** Client `limit` (default 100). */
  limit?: number;
  /** BACKFILL_FROM (default: the history's start). */
  fromMs?: number;
}

export async function exchangeBehaviours(o: BehavioursOptions): Promise<BehaviourResult[]> {
  const scope = new Cleanup();
  try {
    const database = await benchDatabase(scope);
    const db = createDb(database.url);
    scope.add("disconnect Prisma", () => db.$disconnect());
    const endMs = Date.now() - 60_000;
    // No bursts in the main history: splitting a burst millisecond costs the same on every exchange
    // (about 140 requests each) and would only blur the ratios.
    const history: SandboxOptions = {
      seed: 41,
      billCount: o.bills,
      startMs: endMs - 120 * DAY_MS,
      endMs,
      limits: null,
    };
    const bursty: SandboxOptions = { ...history, bursts: 2, burstSize: 150 };
    const sparseYear: SandboxOptions = {
      seed: 42,
      billCount: SPARSE_YEAR_BILLS,
      startMs: endMs - 365 * DAY_MS,
      endMs,
      limits: null,
    };
    const pages = (bills: number, size: number) => ({
      what: `pages needed, ceil(${int(bills)} / ${size})`,
      requests: Math.ceil(bills / size),
    });

    let n = 0;
    const sync = (r: Omit<Run, "account">) => syncCost(db, { ...r, account: `behaviour_${n++}` });
    const honest = await sync({ sandbox: history });
    const baseline = { what: "honest exchange, limit 100", cost: honest };
    const results: BehaviourResult[] = [];

    // Page size: an exchange that serves 50 whatever the limit, against one that serves 50
    // because 50 is asked (the honest exchange at the same page size).
    const honest50 = { what: "honest exchange, client limit 50", cost: await sync({ sandbox: history, limit: 50 }) };
    const capped = await sync({ sandbox: { ...history, pageCap: 50 } });
    results.push({
      behaviour: "page cap 50 (hasNextPage honest)",
      cost: capped,
      baseline: honest50,
      floor: pages(o.bills, 50),
    });
    results.push({
      behaviour: "page cap 50, hasNextPage absent",
      cost: await sync({ sandbox: { ...history, pageCap: 50, hasNext: "absent" } }),
      baseline: { what: "page cap 50, hasNextPage honest", cost: capped },
      floor: pages(o.bills, 50),
    });
    results.push({
      behaviour: "hasNextPage absent",
      cost: await sync({ sandbox: { ...history, hasNext: "absent" } }),
      baseline,
      floor: pages(o.bills, BILLS_MAX_LIMIT),
    });
    results.push({
      behaviour: "hasNextPage always true",
      cost: await sync({ sandbox: { ...history, hasNext: "always" } }),
      baseline,
      floor: pages(o.bills, BILLS_MAX_LIMIT),
    });

    // Span limit on a sparse year: a 1-day span forces 365 windows whatever the client does.
    const sparseHonest = {
      what: `honest exchange, same sparse year (${SPARSE_YEAR_BILLS} bills over 365 days)`,
      cost: await sync({ sandbox: sparseYear }),
    };
    results.push({
      behaviour: `max span 1 day (refused with HTTP 200), sparse year of ${SPARSE_YEAR_BILLS} bills`,
      cost: await sync({ sandbox: { ...sparseYear, maxSpanMs: DAY_MS, refusalStatus: 200 } }),
      baseline: sparseHonest,
      floor: { what: "windows the span forces, ceil(365 d / 1 d)", requests: 365 },
    });

    // History depth: the exchange keeps 90 of the 120 days; the run starts at the history's start
    // (before the horizon). Baseline: an honest exchange synced from the same horizon.
    const horizon = Date.now() - 90 * DAY_MS;
    const kept = (await startAndCount(history, horizon)).retrievable;
    results.push({
      behaviour: "history 90 days (of 120), run started at the history's start",
      cost: await sync({ sandbox: { ...history, historyDays: 90 } }),
      baseline: {
        what: "honest exchange, synced from now - 90 days",
        cost: await sync({ sandbox: history, fromMs: horizon }),
      },
      floor: pages(kept, BILLS_MAX_LIMIT),
    });
    results.push({
      behaviour: "filter skew 3 s",
      cost: await sync({ sandbox: { ...history, filterSkewMs: 3000 } }),
      baseline,
      floor: pages(o.bills, BILLS_MAX_LIMIT),
    });
    // Unknown types matter where a millisecond is full: the same history with two bursts.
    const unknown = Math.max(1, Math.round(o.bills * 0.05));
    results.push({
      behaviour: `unknown business types (${int(unknown)} bills, one in a burst; history with 2 bursts of 150)`,
      cost: await sync({ sandbox: { ...bursty, unknownTypes: unknown } }),
      baseline: { what: "honest exchange, the same history with its bursts", cost: await sync({ sandbox: bursty }) },
      floor: pages(o.bills, BILLS_MAX_LIMIT),
    });
    return results;
  } finally {
    await scope.run();
  }
}

/** The bills of `options`' history at or after `fromMs` (its sandbox started and closed). */
async function startAndCount(options: SandboxOptions, fromMs: number): Promise<{ retrievable: number }> {
  const sandbox = await startSandbox(options);
  try {
    return { retrievable: sandbox.truth().filter((b) => b.cTimeMs >= fromMs).length };
  } finally {
    await sandbox.close();
  }
}

async function syncCost(db: Db, r: Run): Promise<SyncCost> {
  const sandbox = await startSandbox(r.sandbox);
  const client = unbudgetedSandboxClient(sandbox.url, pino({ level: "silent" }), { baseMs: 20, maxMs: 500 });
  const truth = sandbox.truth();
  const limit = r.limit ?? BILLS_MAX_LIMIT;
  const maxRequests = Math.max(WATCHDOG.minRequests, WATCHDOG.requestsPerPage * Math.ceil(truth.length / limit));
  const horizon = sandbox.retrievableFromMs();
  const started = performance.now();
  let stopped: string | undefined;
  const watch = setInterval(() => {
    if (stopped) return;
    const used = sandbox.stats().billsRequests;
    const seconds = (performance.now() - started) / 1000;
    if (used > maxRequests || seconds > WATCHDOG.seconds) {
      stopped = `stopped after ${int(used)} requests, ${seconds.toFixed(0)} s`;
      sandbox.setFaults({ rate: 1, kinds: ["500-html"] });
    }
  }, 200);
  try {
    let failure: string | undefined;
    let unverified = new Set<number>();
    try {
      const summary = await syncAccountBills({
        db,
        client,
        logger: pino({ level: "silent" }),
        accountName: r.account,
        backfillFromMs: r.fromMs ?? truth[0]!.cTimeMs,
        lookbackMs: 600_000,
        limit,
      });
      unverified = new Set(summary.unverifiedMilliseconds);
    } catch (err) {
      failure = (err as Error).message;
    }
    const seconds = (performance.now() - started) / 1000;
    const requests = sandbox.stats().billsRequests;
    if (stopped) return { requests, seconds, outcome: stopped, whole: false };
    if (failure)
      return {
        requests,
        seconds,
        outcome: `failed: ${failure.length > 160 ? `${failure.slice(0, 160)}...` : failure}`,
        whole: false,
      };
    // Whole? Every bill from where the run could start (the horizon, with a minute of slack) is stored.
    const from = Math.max(r.fromMs ?? 0, horizon === undefined ? 0 : horizon + 60_000);
    const want = truth.filter((b) => sandbox.filterTimeOf(b) >= from);
    const rows = await db.$queryRawUnsafe<{ id: string }[]>(
      "SELECT bill_id AS id FROM bills WHERE account_name = $1",
      r.account,
    );
    const stored = new Set(rows.map((x) => x.id));
    const missing = want.filter((b) => !stored.has(b.billId));
    const lost = missing.filter((b) => !unverified.has(b.cTimeMs) && !unverified.has(sandbox.filterTimeOf(b))).length;
    const named = `${unverified.size} millisecond${unverified.size === 1 ? "" : "s"} reported unverified`;
    const outcome =
      lost > 0
        ? `${int(lost)} of ${int(want.length)} missing`
        : missing.length > 0
          ? `unverified: ${missing.length} bills missing, all in the ${named}`
          : unverified.size > 0
            ? `exact, ${named}`
            : "exact";
    return { requests, seconds, outcome, whole: lost === 0 };
  } finally {
    clearInterval(watch);
    await client.close();
    await sandbox.close();
  }
}

export function behaviourRows(results: BehaviourResult[], bills: number, note: string): Row[] {
  const rows: Row[] = [
    [
      "history",
      `${int(bills)} bills${note} over 120 days ending now; the unknown-types row adds two bursts of 150 bills in one millisecond; the span-limit row: ${SPARSE_YEAR_BILLS} bills over 365 days`,
    ],
  ];
  for (const r of results) {
    const vsBaseline = r.cost.requests / r.baseline.cost.requests;
    const vsFloor = r.cost.requests / r.floor.requests;
    // A ratio means nothing for a copy that is not whole (a run that gave up early looks cheap).
    const ratios = r.cost.whole
      ? `ratio ${ratio(vsBaseline)}${vsBaseline > 1.5 ? " (goal <= 1.5x)" : ""}; ${r.floor.what}: ${int(r.floor.requests)}, ratio ${ratio(vsFloor)}`
      : `no ratio: the copy is not whole; ${r.floor.what}: ${int(r.floor.requests)}`;
    rows.push([
      r.behaviour,
      `${int(r.cost.requests)} requests (${r.cost.outcome}, ${r.cost.seconds.toFixed(1)} s); ${r.baseline.what}: ${int(r.baseline.cost.requests)} (${r.baseline.cost.outcome}); ${ratios}`,
    ]);
  }
  return rows;
}

export const BEHAVIOURS_METHOD = [
  "Each row syncs one history (the main one has no bursts: a burst's split costs the same on every exchange and would blur the ratios; in-process sandbox, no faults, no weight limits, the bills stream as `sync --once` runs it: syncAccountBills, limit 100 unless said) into its own account of a fresh migrated database, starting at the history's first bill.",
  "Requests: the bills requests the sandbox received, refused and retried ones included. Outcome: exact when every bill the exchange could serve (with a horizon: from one minute after it) is stored; unverified when the only ones missing lie in milliseconds the run reported unverified (exit 4); else how many are missing, or the run's error.",
  "Baseline: the honest exchange at the same page size over the same history: limit 100 for most rows; for the page cap of 50, an honest exchange asked for 50 (its pages are 50 because the client asks 50); for the cap with hasNextPage left out, the same cap with hasNextPage honest; for the span limit, the honest exchange over the same sparse year; for the 90-day history, the honest exchange synced from now - 90 days (the same bills).",
  "Floor: the pages a perfect pager needs, ceil(bills / page size); for the span limit, the windows it forces (365 one-day windows), which no client can go below. Goal (issue 14): requests <= 1.5x the baseline; printed, never asserted.",
  "A run is stopped (every further request answered HTTP 500) after max(3,000, 30 x pages) requests or 600 s: the row then says so.",
];
