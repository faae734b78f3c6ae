// `ledger-sync demo`: the whole main job on one machine with nothing configured. Starts what is
// missing (embedded PostgreSQL, a local Redis, the sandbox exchange), migrates, runs the worker,
// backfills the history through the queue with a progress bar, keeps syncing live sandbox bills
// for --for seconds, then stops everything it started and prints a summary read from the database.
// DATABASE_URL, REDIS_URL and EXCHANGE_API_* set in the environment are used instead. Where no
// Redis can be had (a user who cannot install redis-server), the same story runs inline.
import { loadAccounts } from "../../config/accounts.ts";
import { loadConfig } from "../../config/index.ts";
import { createLogger } from "../../log/logger.ts";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../sandbox/index.ts";
import { startLocalPostgres } from "../../local-services/postgres/index.ts";
import { redisUnavailable, startRedisServer } from "../../local-services/redis.ts";
import { freePort } from "../../local-services/free-port.ts";
import { migrateDeploy } from "../../store/migrate/index.ts";
import { createDb } from "../../store/prisma.ts";
import { planBackfill } from "../../jobs/backfill-plan.ts";
import type { BackfillPlan } from "../backfill-runner.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { isoList } from "../sync-summary.ts";
import { DEMO_HISTORY_MS, demoAnchor, recordLiveBill } from "./demo-anchor.ts";
import { demoDatabase } from "./demo-database.ts";
import { startDemoSyncing } from "./demo-syncing.ts";
import { printDemoSummary } from "./demo-summary.ts";

const LIVE_TYPES = [
  { businessType: "position_funding", symbol: "cmt_btcusdt", amount: "-0.42" },
  { businessType: "deposit", symbol: "", amount: "250" },
  { businessType: "position_funding", symbol: "cmt_ethusdt", amount: "0.13" },
] as const;

export async function runDemo(o: { bills: number; forSeconds: number; pgPort: number }): Promise<void> {
  const out = (line = "") => process.stdout.write(`${line}\n`);
  const base = loadConfig();
  // The demo prints its own story; the worker's info logs would drown it.
  const logger = createLogger(base.logLevel === "info" ? "warn" : base.logLevel, { format: base.logFormat });
  const cleanup: (() => Promise<void>)[] = [];
  let interrupted = false;
  let wake: () => void = () => {};
  const onSignal = () => {
    interrupted = true;
    wake();
  };
  // A signal while something starts is acted on once it has started (then everything is stopped).
  const stopIfInterrupted = () => {
    if (interrupted) throw new CliExit(EXIT.interrupted, "interrupted; everything started by the demo was stopped");
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const embedded = base.databaseUrl
      ? undefined
      : await startLocalPostgres(".data/demo-postgres", o.pgPort, {
          instead: "pass --pg-port <another port>, or set DATABASE_URL to a PostgreSQL server of your own",
        });
    if (embedded) cleanup.push(() => embedded.stop());
    stopIfInterrupted();
    const anchor = base.exchange.credentials ? undefined : demoAnchor(o.bills);
    const databaseUrl = base.databaseUrl ?? (await demoDatabase(embedded!.url, anchor?.fresh ?? false));
    const noRedis = base.redisUrl ? undefined : redisUnavailable();
    const redis = base.redisUrl || noRedis ? undefined : await startRedisServer((line) => out(line));
    if (redis) cleanup.push(() => redis.stop());
    stopIfInterrupted();
    const redisUrl = base.redisUrl ?? redis?.url;

    let sandbox: Sandbox | undefined;
    let historyFromMs = base.backfillFromMs;
    if (anchor) {
      historyFromMs = anchor.endMs - DEMO_HISTORY_MS;
      sandbox = await startSandbox({
        seed: 1,
        billCount: anchor.bills,
        bursts: anchor.bills >= 2000 ? 2 : 0,
        startMs: historyFromMs,
        endMs: anchor.endMs,
      });
      const sb = sandbox;
      cleanup.push(() => sb.close());
      for (const bill of anchor.live) sb.appendBill(bill);
    }
    const redisSays = redis ? `local redis-server at ${redis.url}` : redisUrl ? "REDIS_URL" : "none";
    out(
      `database: ${embedded ? `embedded PostgreSQL in ${embedded.where}` : "DATABASE_URL"}; redis: ${redisSays}; ` +
        `exchange: ${sandbox ? `sandbox at ${sandbox.url} (${o.bills} bills of history)` : base.exchange.baseUrl}`,
    );
    if (noRedis)
      out(
        `no queue: ${noRedis}, so the demo syncs inline in this process ` +
          "(install redis-server or set REDIS_URL to run the worker)",
      );
    const migrated = await migrateDeploy(databaseUrl);
    out(`migrations: ${migrated.applied.length ? `applied ${migrated.applied.join(", ")}` : "up to date"}`);
    stopIfInterrupted();

    const startedAt = Date.now();
    const config = loadConfig({
      ...process.env,
      DATABASE_URL: databaseUrl,
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
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
      METRICS_PORT: String(await freePort()),
      QUEUE_PREFIX: process.env.QUEUE_PREFIX ?? "ledger-sync-demo",
    });
    const account = loadAccounts(config)[0]!;
    const plans: BackfillPlan[] = [
      { account, windows: planBackfill(account.name, historyFromMs, startedAt, 3 * 86_400_000) },
    ];
    const db = createDb(databaseUrl);
    cleanup.push(() => db.$disconnect());

    const syncing = await startDemoSyncing({ config, logger, db, databaseUrl, redisUrl, account, plans, out });
    cleanup.push(() => syncing.stop("demo finished"));
    const { backfill } = syncing;
    if (!backfill.complete && !interrupted) throw new CliExit(EXIT.failed, backfill.reason);
    if (backfill.complete) out(`history backfilled: ${backfill.windows} windows, ${backfill.bills} bills`);
    if (backfill.complete && backfill.unverifiedMilliseconds.length) {
      out(
        "  same-millisecond bursts not provably complete (fetched by every known symbol): " +
          `${isoList(backfill.unverifiedMilliseconds)}`,
      );
    }

    if (!interrupted && o.forSeconds > 0) {
      out(
        `syncing live for ${o.forSeconds} s${sandbox ? " (the sandbox adds a bill every second)" : ""}; ` +
          "Ctrl-C stops early",
      );
      const until = Date.now() + o.forSeconds * 1000;
      let n = 0;
      while (!interrupted && Date.now() < until) {
        if (sandbox && anchor)
          recordLiveBill(
            anchor,
            sandbox.appendBill({ coin: "USDT", ...LIVE_TYPES[n++ % LIVE_TYPES.length]!, fillFee: "0" }),
          );
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.min(1000, Math.max(0, until - Date.now())));
        });
      }
    }
    // Let the syncing take the newest bills before stopping it (unless the user is leaving).
    if (interrupted) await syncing.stop("interrupted");
    else await syncing.finish();

    const psqlUrl = embedded ? databaseUrl : '"$DATABASE_URL"';
    const match = await printDemoSummary(out, db, account.name, sandbox, psqlUrl);
    if (!match && !interrupted) throw new CliExit(EXIT.failed, "the database does not match the sandbox's truth");
    stopIfInterrupted();
  } catch (err) {
    // A step cut short by the signal fails with its own message: the reason is the signal.
    stopIfInterrupted();
    throw err;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    for (const stop of cleanup.reverse()) await stop().catch(() => undefined);
  }
}
