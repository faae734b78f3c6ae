// @module-tag redis
// A bill the exchange files late, far behind the cursor (twice SYNC_LOOKBACK_MS): the worker's
// verify reports the continuity break it leaves, and heals it in the first cycle after the bill
// appears, without a person; a re-fetch that finds the gap still there backs off. Real
// PostgreSQL, Redis and the sandbox over HTTP; the bills job runs as the worker runs it.
import type { Job } from "bullmq";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import type { ExchangeClient } from "../../src/exchange/http-client.ts";
import type { WorkerContext } from "../../src/jobs/context.ts";
import { processBills } from "../../src/jobs/processors/bills.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { createMetrics, type Metrics } from "../../src/ops/metrics.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { readVerifyStatus } from "../../src/store/status.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";

const LOOKBACK = 600_000;
let t: MigratedDb;
let r: TestRedis;
let sandbox: Sandbox;
let client: ExchangeClient;
let metrics: Metrics;
let ctx: WorkerContext;

beforeAll(async () => {
  t = await createMigratedDb();
  r = await createTestRedis();
  const now = Date.now();
  sandbox = await startSandbox({ seed: 91, billCount: 1500, startMs: now - 2 * 86_400_000, endMs: now - 1000, limits: null, accountEvolution: "manual" });
  client = sandboxClient(sandbox);
  metrics = createMetrics({ defaultMetrics: false });
  ctx = {
    config: loadConfig({ QUEUE_PREFIX: r.prefix, DATABASE_URL: t.url, BILLS_INTERVAL_MS: "1000", SYNC_LOOKBACK_MS: String(LOOKBACK) }),
    db: t.db,
    redis: r.client,
    accounts: new Map([["heal", { account: { name: "heal", coinIds: [], backfillFromMs: sandbox.truth()[0]!.cTimeMs, credentials: DEFAULT_SANDBOX_CREDENTIALS }, client }]]),
    logger: pino({ level: "silent" }),
    metrics,
    forceStop: new AbortController().signal,
  };
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  await r.cleanup();
  await t.close();
});

const runJob = () => processBills(ctx, { data: { account: "heal" } } as Job<JobData["bills"]>);
const series = async (name: string) => {
  const m = new RegExp(`^ledger_sync_${name}\\{account="heal"\\} (\\d+)$`, "m").exec(await metrics.registry.metrics());
  return m ? Number(m[1]) : undefined;
};

describe("late bills heal themselves", () => {
  it("a bill filed 2 x SYNC_LOOKBACK_MS behind the cursor is stored in the first cycle after it appears; the break is reported, then healed", async () => {
    // The latest bill at least twice the lookback old that has a later bill of its coin after it.
    const truth = sandbox.truth();
    const limit = Date.now() - 2 * LOOKBACK;
    const late = [...truth].reverse().find((b) => b.cTimeMs < limit && truth.some((x) => x.coin === b.coin && x.cTimeMs > b.cTimeMs) && b.amount !== "0")!;
    sandbox.hideBill(late.billId);

    await runJob();
    let stored = await storedBills(t.db, "heal");
    expect(stored.some((b) => b.billId === late.billId)).toBe(false);
    expect(await series("breaks_open")).toBe(1);
    const reported = await readVerifyStatus(t.db, "heal");
    expect(reported[0]!.outcome).toBe("fail");
    expect(reported[0]!.failing.join("\n")).toMatch(/balance-continuity/);

    // The exchange now serves it; the re-fetch's backoff (one BILLS_INTERVAL_MS) has passed.
    sandbox.revealBill(late.billId);
    await new Promise((res) => setTimeout(res, 1100));
    const result = await runJob();
    stored = await storedBills(t.db, "heal");
    expect(stored).toEqual(asRows(sandbox.truth()));
    expect(await series("breaks_healed_total")).toBe(1);
    expect(await series("breaks_open")).toBe(0);
    expect(result.verify).toMatchObject({ ok: true });
    expect((await readVerifyStatus(t.db, "heal"))[0]!.outcome).toBe("pass");
  });
});
