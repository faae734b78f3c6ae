// Item 4: freshness. The real worker runs with BILLS_INTERVAL_MS; bills are appended to the
// sandbox at random moments, and for each the time until it is in PostgreSQL is measured.
import pg from "pg";
import { freePort } from "../src/local-services/free-port.ts";
import { sandboxExchangeEnv } from "../src/sandbox/index.ts";
import { Cleanup } from "./cleanup.ts";
import { startCli } from "./cli-process.ts";
import { benchDatabase } from "./postgres.ts";
import { benchRedis } from "./redis.ts";
import { int, sec, type Row } from "./report.ts";
import { startSandboxProcess } from "./sandbox-process.ts";

export interface FreshnessOptions {
  intervalMs: number;
  appends: number;
}

export interface FreshnessResult extends FreshnessOptions {
  /** Seconds from append to visible in PostgreSQL, in append order. */
  latencies: number[];
  /** A bill the exchange serves only once the appends are done, 2 x SYNC_LOOKBACK_MS behind: seconds from then until stored. */
  lateBill: { behindSeconds: number; hiddenSeconds: number; healedSeconds: number };
  rateLimited: number;
}

/** SYNC_LOOKBACK_MS of the run (the default). */
const LOOKBACK_MS = 600_000;

const HISTORY_BILLS = 2000;
const POLL_MS = 20;

export async function freshness(o: FreshnessOptions): Promise<FreshnessResult> {
  const scope = new Cleanup();
  try {
    const database = await benchDatabase(scope);
    const redis = await benchRedis(scope);
    const endMs = Date.now();
    const startMs = endMs - 86_400_000;
    // Default sandbox and client budgets (500 weight per 10 s): the production defaults.
    const sandbox = await startSandboxProcess({ seed: 13, billCount: HISTORY_BILLS, startMs, endMs }, scope);
    // The late bill: in the exchange's ledger from the start, served only after the appends, by
    // then more than 2 x SYNC_LOOKBACK_MS behind the cursor (healed by the worker's verify).
    const late = await sandbox.hideLateBill(2 * LOOKBACK_MS);
    const hiddenAt = Date.now();
    const reader = new pg.Client({ connectionString: database.url });
    await reader.connect();
    scope.add("close the polling connection", () => reader.end());
    const worker = startCli(
      ["worker"],
      {
        DATABASE_URL: database.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: redis.prefix,
        ...sandboxExchangeEnv(sandbox.url),
        ACCOUNT_NAME: "fresh",
        BACKFILL_FROM: String(startMs),
        BILLS_INTERVAL_MS: String(o.intervalMs),
        SYNC_LOOKBACK_MS: String(LOOKBACK_MS),
        METRICS_PORT: String(await freePort()),
        SHUTDOWN_TIMEOUT_MS: "5000",
        LOG_LEVEL: "info",
      },
      scope,
    );
    const count = async () =>
      (await reader.query<{ n: number }>("SELECT count(*)::int AS n FROM bills WHERE account_name = 'fresh'")).rows[0]
        ?.n ?? 0;
    await worker.waitForLine(/"worker started"/, 60_000);
    // The history first: the first scheduled run syncs it all.
    const deadline = Date.now() + 120_000;
    while ((await count()) < HISTORY_BILLS - 1) {
      if (Date.now() > deadline)
        throw new Error(`the worker did not sync the ${HISTORY_BILLS}-bill history within 120 s:\n${worker.tail()}`);
      await sleep(100);
    }

    const latencies: number[] = [];
    for (let i = 0; i < o.appends; i++) {
      // A random moment relative to the schedule.
      await sleep(Math.random() * o.intervalMs);
      const { bill, appendedAt } = await sandbox.appendBill({ amount: "1" });
      const timeout = Date.now() + o.intervalMs * 5 + 60_000;
      for (;;) {
        const { rowCount } = await reader.query("SELECT 1 FROM bills WHERE account_name = 'fresh' AND bill_id = $1", [
          bill.billId,
        ]);
        if (rowCount) break;
        if (Date.now() > timeout)
          throw new Error(
            `bill ${bill.billId} not in PostgreSQL after ${Date.now() - appendedAt} ms:\n${worker.tail()}`,
          );
        await sleep(POLL_MS);
      }
      latencies.push((Date.now() - appendedAt) / 1000);
    }
    const { revealedAt } = await sandbox.revealBill(late.billId);
    const healTimeout = revealedAt + 30 * 60_000;
    for (;;) {
      const { rowCount } = await reader.query("SELECT 1 FROM bills WHERE account_name = 'fresh' AND bill_id = $1", [
        late.billId,
      ]);
      if (rowCount) break;
      if (Date.now() > healTimeout)
        throw new Error(`late bill ${late.billId} not in PostgreSQL 30 min after it was served:\n${worker.tail()}`);
      await sleep(POLL_MS * 5);
    }
    const lateBill = {
      behindSeconds: (revealedAt - late.cTimeMs) / 1000,
      hiddenSeconds: (revealedAt - hiddenAt) / 1000,
      healedSeconds: (Date.now() - revealedAt) / 1000,
    };
    const stats = await sandbox.stats();
    return { ...o, latencies, lateBill, rateLimited: stats.rateLimited };
  } finally {
    await scope.run();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  const hi = Math.ceil(i);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (i - lo);
}

export function freshnessRows(r: FreshnessResult, sizeNote: string): Row[] {
  const sorted = [...r.latencies].sort((a, b) => a - b);
  const goal = r.intervalMs / 1000 + 2;
  const within = r.latencies.filter((l) => l <= goal).length;
  return [
    ["BILLS_INTERVAL_MS", int(r.intervalMs)],
    ["bills appended at random moments", `${r.appends}${sizeNote}`],
    ["append -> in PostgreSQL: median", sec(quantile(sorted, 0.5))],
    ["append -> in PostgreSQL: min / max", `${sec(sorted[0] ?? NaN)} / ${sec(sorted.at(-1) ?? NaN)}`],
    [`goal: <= interval + 2 s = ${sec(goal)}`, `${within} of ${r.latencies.length} within`],
    [
      "late bill (served 2 x SYNC_LOOKBACK_MS behind the cursor) -> in PostgreSQL",
      `${sec(r.lateBill.healedSeconds)} after the exchange served it (${int(r.lateBill.behindSeconds / 60)} min behind; the verify had reported its break, and the re-fetch backed off, for ${int(r.lateBill.hiddenSeconds)} s)`,
    ],
    ["429s from the sandbox's limiter", String(r.rateLimited)],
  ];
}

export const FRESHNESS_METHOD = [
  "The CLI is started as executing bin/ledger-sync.js starts it (the Docker image, npx): its first line's environment assignments and node options are applied (bench/cli-process.ts).",
  "The real `ledger-sync worker` (child process, its own Redis key prefix, fresh database) syncs one account with BILLS_INTERVAL_MS = the interval and the default budgets and SYNC_LOOKBACK_MS; the sandbox (own process, default limits 500/500 per 10 s) holds 2,000 bills of the last day, which the worker syncs first.",
  "Then, one after another: wait a random time in [0, interval), append a bill in the sandbox (over IPC; appended-at is the sandbox's clock, which is this machine's), and poll PostgreSQL every 20 ms for its bill_id. Latency = first time it is found − appended-at. Each bills job also runs the incremental verify (part of the real job).",
  "Late bill (issue 15): one bill more than 2 x SYNC_LOOKBACK_MS (600 s) old is hidden in the sandbox before the worker starts (the exchange has it, serves it not); the worker's verify reports the break it leaves and its re-fetches back off (BILLS_INTERVAL_MS, doubling). After the appends it is served; the time until it is in PostgreSQL is the healing time, which includes the backoff then running.",
];
