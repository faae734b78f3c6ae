// @module-tag redis
// The scheduled bills job verifies what it synced (the incremental verify) and publishes the result:
// /metrics gauges per check and `ledger-sync status`. Real PostgreSQL, Redis (the account lock) and
// the sandbox exchange over HTTP; the processor runs as the worker runs it.
import type { Job } from "bullmq";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import type { ExchangeClient } from "../../src/exchange/http-client.ts";
import type { WorkerContext } from "../../src/jobs/context.ts";
import { processBills } from "../../src/jobs/processors/bills.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { createMetrics, exchangeFactValues, type Metrics } from "../../src/ops/metrics.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { readExchangeFacts } from "../../src/store/exchange-profiles.ts";
import { createLeaseKeeper } from "../../src/store/lease-keeper.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let t: MigratedDb;
let r: TestRedis;
let sandbox: Sandbox;
let client: ExchangeClient;
let metrics: Metrics;
let ctx: WorkerContext;

beforeAll(async () => {
  t = await createMigratedDb();
  r = await createTestRedis();
  sandbox = await startSandbox({ seed: 23, billCount: 2000, limits: null, accountEvolution: "manual" });
  client = sandboxClient(sandbox);
  metrics = createMetrics({ defaultMetrics: false });
  const config = loadConfig({ QUEUE_PREFIX: r.prefix, COIN_NAMES: "2=USDT,1=USDC", DATABASE_URL: t.url });
  ctx = {
    config,
    db: t.db,
    leases: createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "test worker" }),
    redis: r.client,
    accounts: new Map([
      [
        "w",
        {
          account: {
            name: "w",
            coinIds: [],
            backfillFromMs: sandbox.truth()[0]!.cTimeMs,
            credentials: DEFAULT_SANDBOX_CREDENTIALS,
            billsSource: "v2" as const,
          },
          client,
          stopped: new AbortController().signal,
        },
      ],
    ]),
    logger: pino({ level: "silent" }),
    metrics,
    forceStop: new AbortController().signal,
  };
});
afterAll(async () => {
  await ctx.leases.close();
  await client.close();
  await sandbox.close();
  await r.cleanup();
  await t.close();
});

const runJob = () => processBills(ctx, { data: { account: "w" } } as Job<JobData["bills"]>);
const gauge = async (check: string) => {
  const text = await metrics.registry.metrics();
  const m = new RegExp(`^ledger_sync_verify_failures\\{account="w",check="${check}"\\} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
};

describe("the bills job verifies what it synced", () => {
  it("publishes a pass, then the break a bad write introduces, in /metrics and status", async () => {
    const first = await runJob();
    expect(first.verify).toMatchObject({ ok: true, failures: 0, fromMs: 0 });
    for (const check of ["balance-continuity", "balance-vs-collateral", "cum-vs-bills", "quarantine", "cursor-lag"])
      expect(await gauge(check), check).toBe(0);
    expect(await metrics.registry.metrics()).toMatch(
      /^ledger_sync_verify_last_run_timestamp_seconds\{account="w"\} \d+/m,
    );

    // A bill whose balance does not follow, written behind the verified point (as a late bill would be).
    const middle = sandbox.truth()[1000]!;
    await commitBillsWindow(t.db, {
      accountName: "w",
      stream: "bills",
      cursorStream: null,
      cursorMs: 0,
      bills: [
        {
          billId: "888888888888888888888",
          coin: middle.coin,
          symbol: "",
          businessType: "deposit",
          amount: "1",
          balance: "0.5",
          fillFee: "0",
          cTimeMs: middle.cTimeMs,
          raw: {},
        },
      ],
      rejected: [],
      context: {},
    });
    const second = await runJob();
    expect(second.verify).toMatchObject({ ok: false });
    expect(await gauge("balance-continuity")).toBeGreaterThanOrEqual(1);

    const status = await runCli(["status", "--json"], { DATABASE_URL: t.url });
    expect(status.code, status.stderr).toBe(0);
    const out = JSON.parse(status.stdout) as {
      verify: { account: string; outcome: string; failures: number; failing: string[] }[];
    };
    expect(out.verify).toHaveLength(1);
    expect(out.verify[0]).toMatchObject({ account: "w", outcome: "fail" });
    expect(out.verify[0]!.failing.join("\n")).toContain(`balance-continuity ${middle.coin}`);
  });

  it("publishes what the sync stored about the exchange as exchange_fact, dropping series of facts not learnt", async () => {
    // Series left from before: every fact set, so each one the sync did not learn must disappear.
    metrics.exchangeFacts("w", {
      pageSize: 7,
      pageSizeCapped: true,
      maxSpanMs: 1_000,
      historyMs: 86_400_000,
      filterOffsetMs: 1,
      startInclusive: true,
      endInclusive: true,
      hasNextPage: "honest",
    });
    await runJob();
    const stored = await readExchangeFacts(t.db, "w");
    expect(stored).toBeDefined();
    const expected = Object.fromEntries(Object.entries(exchangeFactValues(stored!)).filter(([, v]) => v !== null));
    expect(expected).toHaveProperty("page_size");
    const text = await metrics.registry.metrics();
    const published = Object.fromEntries(
      [...text.matchAll(/^ledger_sync_exchange_fact\{account="w",fact="(\w+)"\} (\S+)$/gm)].map((m) => [
        m[1],
        Number(m[2]),
      ]),
    );
    expect(published).toEqual(expected);
  });
});
