// @module-tag redis
// A worker job and an inline command exclude each other: both take the account's run lease
// (store/run-lease.ts); the worker's are kept by its one lease keeper. Real PostgreSQL and Redis.
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { leaseAccount } from "../../src/jobs/account-lease.ts";
import type { WorkerContext } from "../../src/jobs/context.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { acquireRunLease, createLeaseKeeper } from "../../src/store/lease-keeper.ts";
import { AccountBusyError, type RunLockGroup } from "../../src/store/run-lease.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let t: MigratedDb;
let r: TestRedis;
let ctx: WorkerContext;
const acquireRunLock = (url: string, account: string, group: RunLockGroup) =>
  acquireRunLease({ connectionString: url }, account, [group], { ttlMs: 30_000, what: "sync --once" });
beforeAll(async () => {
  t = await createMigratedDb();
  r = await createTestRedis();
  ctx = {
    config: loadConfig({ QUEUE_PREFIX: r.prefix, DATABASE_URL: t.url }),
    db: t.db,
    leases: createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "worker" }),
    redis: r.client,
    accounts: new Map(),
    logger: pino({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
    forceStop: new AbortController().signal,
  };
});
afterAll(async () => {
  await ctx.leases.close();
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

  it("holds many jobs' leases with no connection open, and stops a job whose lease was lost", async () => {
    const accounts = Array.from({ length: 10 }, (_, i) => `many${i}`);
    const leases = await Promise.all(accounts.map((a) => leaseAccount(ctx, a, "bills")));
    expect(leases.every((l) => l !== undefined)).toBe(true);
    expect(new Set(leases.map((l) => l!.fence.token)).size).toBe(10);
    const admin = new pg.Client({ connectionString: t.url });
    await admin.connect();
    try {
      // Another process took one account (its lease had expired unrenewed, say).
      await admin.query("UPDATE run_leases SET token = nextval('run_lease_tokens') WHERE account_name = 'many3'");
    } finally {
      await admin.end();
    }
    await expect.poll(() => leases[3]!.signal.aborted, { timeout: 15_000 }).toBe(true);
    expect(leases.filter((l) => l!.signal.aborted)).toHaveLength(1);
    await Promise.all(leases.map((l) => l!.release()));
    // Every lease is free again: the next job takes the account at once.
    const next = await leaseAccount(ctx, "many0", "bills");
    expect(next).toBeDefined();
    await next!.release();
  });
});
