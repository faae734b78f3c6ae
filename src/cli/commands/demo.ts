// `ledger-sync demo` (npm run demo): the whole path on one machine with nothing configured —
// an embedded PostgreSQL, the sandbox exchange, migrations, a bills sync, and a summary read back
// from the database. DATABASE_URL / EXCHANGE_* set in the environment are used instead.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { InvalidArgumentError, type Command } from "commander";
import { createRuntime } from "../runtime.ts";

const DEMO_PG_PORT = 54320;
const ANCHOR_FILE = ".data/demo-sandbox.json";

/** The demo sandbox's history span and size, fixed by the first run (delete .data to start over). */
function demoAnchor(bills: number): { endMs: number; bills: number } {
  if (existsSync(ANCHOR_FILE)) {
    const saved = JSON.parse(readFileSync(ANCHOR_FILE, "utf8")) as { endMs?: unknown; bills?: unknown };
    if (typeof saved.endMs === "number" && saved.bills === bills) return { endMs: saved.endMs, bills };
  }
  const anchor = { endMs: Date.now(), bills };
  mkdirSync(".data", { recursive: true });
  writeFileSync(ANCHOR_FILE, `${JSON.stringify(anchor)}\n`);
  return anchor;
}

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description("try ledger-sync with nothing installed: embedded PostgreSQL (.data/demo-postgres) + sandbox exchange, migrate, sync bills, summarise")
    .option("--bills <n>", "bills in the sandbox's history", (v) => {
      if (!/^[0-9]+$/.test(v) || Number(v) < 1 || Number(v) > 2_000_000) throw new InvalidArgumentError("must be a whole number from 1 to 2000000");
      return Number(v);
    }, 20_000)
    .action(async (o: { bills: number }) => {
      const { config, logger, signal } = createRuntime();
      const [{ startEmbeddedPostgres }, { startSandbox, DEFAULT_SANDBOX_CREDENTIALS }, { migrateDeploy }, { createDb }, { syncAccountBills }, { ExchangeClient }, { SlidingWindowGate }, { summariseBills }] = await Promise.all([
        import("../../store/embedded-postgres.ts"),
        import("../../sandbox/index.ts"),
        import("../../store/migrate/index.ts"),
        import("../../store/prisma.ts"),
        import("../../streams/bills/index.ts"),
        import("../../exchange/http-client.ts"),
        import("../../exchange/weight-gate.ts"),
        import("../../store/bills-summary.ts"),
      ]);
      const { syncAccountSnapshots } = await import("../../streams/snapshots/index.ts");
      const out = (line = "") => process.stdout.write(`${line}\n`);

      const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(".data/demo-postgres", DEMO_PG_PORT);
      const databaseUrl = config.databaseUrl ?? embedded!.url;
      const useSandbox = !config.exchange.credentials;
      // The sandbox's history is generated from a seed and a time span. The span is fixed at the
      // first run and kept in .data, so later runs serve the very same bills (else every rerun
      // would show "revised" bills: same ids, regenerated content).
      const anchor = demoAnchor(o.bills);
      const sandbox = useSandbox ? await startSandbox({ seed: 1, billCount: anchor.bills, bursts: anchor.bills >= 2000 ? 2 : 0, startMs: anchor.endMs - 30 * 86_400_000, endMs: anchor.endMs }) : undefined;
      const db = createDb(databaseUrl);
      const client = new ExchangeClient({
        baseUrl: sandbox?.url ?? config.exchange.baseUrl,
        credentials: config.exchange.credentials ?? DEFAULT_SANDBOX_CREDENTIALS,
        locale: config.exchange.locale,
        timeoutMs: config.exchange.timeoutMs,
        maxAttempts: config.exchange.maxAttempts,
        gate: new SlidingWindowGate({ ip: config.rateLimit.ipWeight, uid: config.rateLimit.uidWeight, windowMs: config.rateLimit.windowMs }),
        logger,
      });
      try {
        out(`database: ${embedded ? "embedded PostgreSQL in .data/demo-postgres" : "DATABASE_URL"}; exchange: ${sandbox ? `sandbox at ${sandbox.url} (${o.bills} bills)` : config.exchange.baseUrl}`);
        const migrated = await migrateDeploy(databaseUrl);
        out(`migrations: ${migrated.applied.length ? `applied ${migrated.applied.join(", ")}` : "up to date"}`);
        const account = config.accountName;
        const started = performance.now();
        const s = await syncAccountBills({
          db,
          client,
          logger,
          accountName: account,
          backfillFromMs: sandbox ? anchor.endMs - 30 * 86_400_000 : config.backfillFromMs,
          lookbackMs: config.lookbackMs,
          signal,
        });
        const seconds = (performance.now() - started) / 1000;
        out(`synced bills: ${s.billsFetched} fetched in ${s.requests} requests, ${s.inserted} new, ${s.revised} revised, ${s.quarantined} quarantined (${seconds.toFixed(1)} s)`);
        if (s.splitMilliseconds) out(`same-millisecond bursts split by filters: ${s.splitMilliseconds}${s.unverifiedMilliseconds.length ? `, of which not provably complete: ${s.unverifiedMilliseconds.length}` : ""}`);
        // The sandbox's coins (USDT = 2, USDC = 1) unless SYNC_COIN_IDS says otherwise.
        const coinIds = config.coinIds.length > 0 ? config.coinIds : sandbox ? ["2", "1"] : [];
        if (coinIds.length > 0) {
          const snaps = await syncAccountSnapshots({ db, client, logger, accountName: account, coinIds, retentionDays: config.snapshotRetentionDays, signal });
          for (const c of snaps.coins) {
            out(
              c.outcome === "stored"
                ? `snapshot coin ${c.coinId}: version ${c.version}, ${c.positionsOpen} open positions, account ${c.changes.accountChanged ? "changed" : "unchanged"}`
                : `snapshot coin ${c.coinId}: QUARANTINED (${c.reason})`,
            );
          }
        }
        const summary = await summariseBills(db, account);
        out();
        out(`bills in the database for account "${account}", by coin and business type:`);
        for (const r of summary.byType) out(`  ${r.coin.padEnd(6)} ${r.businessType.padEnd(28)} ${String(r.count).padStart(7)}  sum ${r.amountSum}`);
        out("latest balance per coin:");
        for (const r of summary.balances) out(`  ${r.coin.padEnd(6)} ${r.balance}  (bill ${r.billId} at ${r.createdAt})`);
        out(`quarantined records: ${summary.quarantined}`);
        out(`snapshot rows: ${Object.entries(summary.snapshotRows).map(([table, n]) => `${table} ${n}`).join(", ")}`);
        if (sandbox) {
          const truth = sandbox.truth();
          out(`sandbox truth: ${truth.length} bills; database: ${summary.total} bills ${summary.total === truth.length ? "(match)" : "(MISMATCH)"}`);
        }
        out();
        out(`explore: psql ${embedded ? `postgresql://postgres:postgres@127.0.0.1:${DEMO_PG_PORT}/postgres` : '"$DATABASE_URL"'} -c 'SELECT * FROM bills ORDER BY created_at DESC LIMIT 20'`);
      } finally {
        await Promise.allSettled([client.close(), db.$disconnect()]);
        await sandbox?.close();
        await embedded?.stop();
      }
    });
}
