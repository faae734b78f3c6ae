// @module-tag redis
// The daily re-sweep: a bill filed later than SYNC_LOOKBACK_MS that moves no balance (amount 0:
// no continuity break gives it away) is missed by the incremental syncs and stored by the
// re-sweep, recorded in sync_runs as "bills-resweep", without moving the cursor. Real
// PostgreSQL, Redis and the sandbox over HTTP.
import type { Job } from "bullmq";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import type { ExchangeClient } from "../../src/exchange/http-client.ts";
import type { WorkerContext } from "../../src/jobs/context.ts";
import { processBills } from "../../src/jobs/processors/bills.ts";
import { processResweep } from "../../src/jobs/processors/resweep.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { readCursor } from "../../src/store/cursors.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";

let t: MigratedDb;
let r: TestRedis;
let sandbox: Sandbox;
let client: ExchangeClient;
let ctx: WorkerContext;

beforeAll(async () => {
  t = await createMigratedDb();
  r = await createTestRedis();
  const now = Date.now();
  sandbox = await startSandbox({ seed: 93, billCount: 800, startMs: now - 86_400_000, endMs: now - 1000, limits: null, accountEvolution: "manual" });
  client = sandboxClient(sandbox);
  ctx = {
    config: loadConfig({ QUEUE_PREFIX: r.prefix, DATABASE_URL: t.url, SYNC_LOOKBACK_MS: "600000", SYNC_RESWEEP_HOURS: "48" }),
    db: t.db,
    redis: r.client,
    accounts: new Map([["sweep", { account: { name: "sweep", coinIds: [], backfillFromMs: sandbox.truth()[0]!.cTimeMs, credentials: DEFAULT_SANDBOX_CREDENTIALS }, client }]]),
    logger: pino({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
    forceStop: new AbortController().signal,
  };
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  await r.cleanup();
  await t.close();
});

const job = (name: string) => ({ name, data: { account: "sweep" } }) as Job<JobData["bills"]>;

describe("the daily re-sweep", () => {
  it("stores a bill filed later than the lookback that no break gives away, and moves no cursor", async () => {
    await processBills(ctx, job("bills"));
    const late = sandbox.appendBill({ cTimeMs: Date.now() - 2 * 3_600_000, businessType: "finish_liquidate", amount: "0", fillFee: "0" });
    await processBills(ctx, job("bills"));
    expect((await storedBills(t.db, "sweep")).some((b) => b.billId === late.billId)).toBe(false);
    const cursor = await readCursor(t.db, "sweep", "bills");

    const result = await processResweep(ctx, job("resweep"));
    expect(result).toMatchObject({ inserted: 1 });
    expect(await storedBills(t.db, "sweep")).toEqual(asRows(sandbox.truth()));
    expect(await readCursor(t.db, "sweep", "bills")).toBe(cursor);
    const runs = await t.db.$queryRawUnsafe<{ stream: string; outcome: string }[]>("SELECT stream, outcome FROM sync_runs WHERE account_name = 'sweep' AND stream = 'bills-resweep'");
    expect(runs).toEqual([{ stream: "bills-resweep", outcome: "ok" }]);
  });
});
