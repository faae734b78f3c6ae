// @module-tag redis
// A worker job and an inline command exclude each other: the job's lease holds the account's
// PostgreSQL run lock besides its Redis lock. Real PostgreSQL and Redis.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { leaseAccount } from "../../src/jobs/account-lease.ts";
import type { WorkerContext } from "../../src/jobs/context.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { AccountBusyError, acquireRunLock } from "../../src/store/run-lock.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let t: MigratedDb;
let r: TestRedis;
let ctx: WorkerContext;
beforeAll(async () => {
  t = await createMigratedDb();
  r = await createTestRedis();
  ctx = {
    config: loadConfig({ QUEUE_PREFIX: r.prefix, DATABASE_URL: t.url }),
    db: t.db,
    redis: r.client,
    accounts: new Map(),
    logger: pino({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
    forceStop: new AbortController().signal,
  };
});
afterAll(async () => {
  await r.cleanup();
  await t.close();
});

describe("a job's account lease", () => {
  it("is refused while an inline command holds the account, and leaves no Redis lock behind", async () => {
    const inline = await acquireRunLock(t.url, "acct", "bills");
    expect(await leaseAccount(ctx, "acct", "bills")).toBeUndefined();
    await inline.release();
    const lease = await leaseAccount(ctx, "acct", "bills");
    expect(lease).toBeDefined();
    await lease!.release();
  });

  it("keeps an inline command out while the job runs, and only for its own group", async () => {
    const lease = (await leaseAccount(ctx, "acct2", "bills"))!;
    await expect(acquireRunLock(t.url, "acct2", "bills")).rejects.toThrow(AccountBusyError);
    const snapshots = await acquireRunLock(t.url, "acct2", "snapshots");
    await snapshots.release();
    await lease.release();
    const after = await acquireRunLock(t.url, "acct2", "bills");
    await after.release();
  });
});
