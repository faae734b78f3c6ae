// @module-tag redis
// A worker job and an inline command exclude each other: the job's lease holds the account's
// PostgreSQL run lock besides its Redis lock, on the worker's one lock session. Real PostgreSQL
// and Redis.
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { leaseAccount } from "../../src/jobs/account-lease.ts";
import type { WorkerContext } from "../../src/jobs/context.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createLockSession, LOCK_SESSION_APPLICATION_NAME } from "../../src/store/lock-session.ts";
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
    lockSession: createLockSession(t.url),
    redis: r.client,
    accounts: new Map(),
    logger: pino({ level: "silent" }),
    metrics: createMetrics({ defaultMetrics: false }),
    forceStop: new AbortController().signal,
  };
});
afterAll(async () => {
  await ctx.lockSession.close();
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

  it("holds many jobs' run locks on one connection, and aborts them all if it is lost", async () => {
    const accounts = Array.from({ length: 10 }, (_, i) => `many${i}`);
    const leases = await Promise.all(accounts.map((a) => leaseAccount(ctx, a, "bills")));
    expect(leases.every((l) => l !== undefined)).toBe(true);
    const admin = new pg.Client({ connectionString: t.url });
    await admin.connect();
    try {
      const sessionBackends =
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()";
      expect((await admin.query(sessionBackends, [LOCK_SESSION_APPLICATION_NAME])).rowCount).toBe(1);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM (${sessionBackends}) s`, [
        LOCK_SESSION_APPLICATION_NAME,
      ]);
    } finally {
      await admin.end();
    }
    await expect.poll(() => leases.every((l) => l!.signal.aborted)).toBe(true);
    await Promise.all(leases.map((l) => l!.release()));
    // Both locks are free again: the next job takes the account (on a new session connection).
    const next = await leaseAccount(ctx, "many0", "bills");
    expect(next).toBeDefined();
    await next!.release();
  });
});
