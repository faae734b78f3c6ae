// `ledger-sync demo`: the whole main job on one machine with nothing configured. Starts what is
// missing (embedded PostgreSQL, a local Redis, the sandbox exchange), migrates, runs the worker,
// backfills the history through the queue with a progress bar, keeps syncing live sandbox bills
// for --for seconds, then stops everything it started and prints a summary read from the database.
// DATABASE_URL, REDIS_URL and EXCHANGE_API_* set in the environment are used instead.
import { loadAccounts } from "../../config/accounts.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../log/logger.ts";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../sandbox/index.ts";
import { startEmbeddedPostgres } from "../../store/embedded-postgres.ts";
import { migrateDeploy } from "../../store/migrate/index.ts";
import { createDb } from "../../store/prisma.ts";
import { planBackfill } from "../../jobs/backfill-plan.ts";
import { startWorker, type RunningWorker } from "../../jobs/worker.ts";
import { runQueued } from "../backfill-queued.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { isoList } from "../sync-summary.ts";
import { DEMO_HISTORY_MS, demoAnchor } from "./demo-anchor.ts";
import { printDemoSummary } from "./demo-summary.ts";
import { freePort } from "./free-port.ts";
import { startRedisServer } from "./local-redis.ts";

const DEMO_PG_PORT = 54320;
const LIVE_TYPES = [
  { businessType: "position_funding", symbol: "cmt_btcusdt", amount: "-0.42" },
  { businessType: "deposit", symbol: "", amount: "250" },
  { businessType: "position_funding", symbol: "cmt_ethusdt", amount: "0.13" },
] as const;

export async function runDemo(o: { bills: number; forSeconds: number }): Promise<void> {
  const out = (line = "") => process.stdout.write(`${line}\n`);
  const base = loadConfig();
  // The demo prints its own story; the worker's info logs would drown it.
  const logger = createLogger(base.logLevel === "info" ? "warn" : base.logLevel);
  const cleanup: (() => Promise<void>)[] = [];
  let interrupted = false;
  let wake: () => void = () => {};
  const onSignal = () => {
    interrupted = true;
    wake();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const embedded = base.databaseUrl ? undefined : await startEmbeddedPostgres(".data/demo-postgres", DEMO_PG_PORT);
    if (embedded) cleanup.push(() => embedded.stop());
    const databaseUrl = base.databaseUrl ?? embedded!.url;
    const redis = base.redisUrl ? undefined : await startRedisServer((line) => out(line));
    if (redis) cleanup.push(() => redis.stop());
    const redisUrl = base.redisUrl ?? redis!.url;

    let sandbox: Sandbox | undefined;
    let historyFromMs = base.backfillFromMs;
    if (!base.exchange.credentials) {
      const anchor = demoAnchor(o.bills);
      historyFromMs = anchor.endMs - DEMO_HISTORY_MS;
      sandbox = await startSandbox({ seed: 1, billCount: anchor.bills, bursts: anchor.bills >= 2000 ? 2 : 0, startMs: historyFromMs, endMs: anchor.endMs });
      const sb = sandbox;
      cleanup.push(() => sb.close());
    }
    out(`database: ${embedded ? "embedded PostgreSQL in .data/demo-postgres" : "DATABASE_URL"}; redis: ${redis ? `local redis-server at ${redis.url}` : "REDIS_URL"}; exchange: ${sandbox ? `sandbox at ${sandbox.url} (${o.bills} bills of history)` : base.exchange.baseUrl}`);
    const migrated = await migrateDeploy(databaseUrl);
    out(`migrations: ${migrated.applied.length ? `applied ${migrated.applied.join(", ")}` : "up to date"}`);

    const startedAt = Date.now();
    const metricsPort = await freePort();
    const config = loadConfig({
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      ...(sandbox
        ? {
            ...sandboxExchangeEnv(sandbox.url),
            SYNC_COIN_IDS: base.coinIds.length ? base.coinIds.join(",") : "2,1",
            // The sandbox's coin ids (src/sandbox/catalog.ts), so the worker's verify can cross-check collateral.
            COIN_NAMES: process.env.COIN_NAMES ?? "2=USDT,1=USDC",
          }
        : {}),
      // The scheduled job covers what happens from now on; the backfill below does the history.
      BACKFILL_FROM: String(startedAt - 60_000),
      BILLS_INTERVAL_MS: process.env.BILLS_INTERVAL_MS ?? "5000",
      SNAPSHOT_INTERVAL_MS: process.env.SNAPSHOT_INTERVAL_MS ?? "10000",
      METRICS_PORT: String(metricsPort),
      QUEUE_PREFIX: process.env.QUEUE_PREFIX ?? "ledger-sync-demo",
    });
    const worker: RunningWorker = await startWorker(config, logger);
    cleanup.push(() => worker.stop("demo finished"));
    out(`worker running: metrics ${worker.metricsUrl}/metrics, health ${worker.metricsUrl}/healthz`);

    const account = loadAccounts(config)[0]!;
    const backfill = await runQueued({ config, logger, databaseUrl, redisUrl, plans: [{ account, windows: planBackfill(account.name, historyFromMs, startedAt, 3 * 86_400_000) }] });
    if (!backfill.complete && !interrupted) throw new CliExit(EXIT.failed, backfill.reason);
    if (backfill.complete) out(`history backfilled: ${backfill.windows} windows, ${backfill.bills} bills`);
    if (backfill.complete && backfill.unverifiedMilliseconds.length) {
      out(`  same-millisecond bursts not provably complete (fetched by every known symbol): ${isoList(backfill.unverifiedMilliseconds)}`);
    }

    if (!interrupted && o.forSeconds > 0) {
      out(`syncing live for ${o.forSeconds} s${sandbox ? " (the sandbox adds a bill every second)" : ""}; Ctrl-C stops early`);
      const until = Date.now() + o.forSeconds * 1000;
      let n = 0;
      while (!interrupted && Date.now() < until) {
        if (sandbox) sandbox.appendBill({ coin: "USDT", ...LIVE_TYPES[n++ % LIVE_TYPES.length]!, fillFee: "0" });
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(1000, Math.max(0, until - Date.now())));
        });
      }
    }
    // Let the worker take the newest bills before stopping it (unless the user is leaving).
    if (!interrupted) await waitForLastBills(config.worker.billsIntervalMs);
    await worker.stop(interrupted ? "interrupted" : "demo finished");

    const db = createDb(databaseUrl);
    try {
      const psqlUrl = embedded ? `postgresql://postgres:postgres@127.0.0.1:${DEMO_PG_PORT}/postgres` : '"$DATABASE_URL"';
      const match = await printDemoSummary(out, db, account.name, sandbox, psqlUrl);
      if (!match && !interrupted) throw new CliExit(EXIT.failed, "the database does not match the sandbox's truth");
    } finally {
      await db.$disconnect();
    }
    if (interrupted) throw new CliExit(EXIT.interrupted, "interrupted; everything started by the demo was stopped");
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    for (const stop of cleanup.reverse()) await stop().catch(() => undefined);
  }
}

/** One more scheduled bills run (the interval plus a margin) so live bills are in. */
function waitForLastBills(intervalMs: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, intervalMs + 1500));
}
