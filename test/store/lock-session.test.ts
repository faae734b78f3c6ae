// The worker's run locks on one shared session, on real PostgreSQL: hundreds of held locks take
// one connection; a second holder in this process or another process is refused until release;
// losing the connection aborts every holder and the next take reconnects; runs left "running" are
// marked interrupted as acquireRunLock does. And the Prisma pool never opens more than poolMax.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLockSession, type LockSession } from "../../src/store/lock-session.ts";
import { createDb, POOL_APPLICATION_NAME } from "../../src/store/prisma.ts";
import { AccountBusyError, acquireRunLock } from "../../src/store/run-lock.ts";
import { startRun } from "../../src/store/sync-runs.ts";
import { createTestDatabase } from "../support/database.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
let admin: pg.Client;
beforeAll(async () => {
  t = await createMigratedDb();
  admin = new pg.Client({ connectionString: t.url });
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await t.close();
});

/** A session with an application_name of its own, so its connections can be counted. */
function session(onLost?: (err: Error) => void): { s: LockSession; name: string } {
  const name = `ls lock session test ${randomBytes(4).toString("hex")}`;
  return { s: createLockSession(t.url, { applicationName: name, ...(onLost ? { onLost } : {}) }), name };
}

async function backends(applicationName: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
    [applicationName],
  );
  return rows[0]!.n;
}

async function advisoryLocksOf(applicationName: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1`,
    [applicationName],
  );
  return rows[0]!.n;
}

describe("lock session", () => {
  it("holds 200 accounts' locks at once on exactly one connection, and unlocks them on release", async () => {
    const { s, name } = session();
    try {
      const accounts = Array.from({ length: 200 }, (_, i) => `many-${i}`);
      const locks = await Promise.all(accounts.map((a) => s.tryAcquire(a, "bills")));
      expect(locks.every((l) => l !== undefined)).toBe(true);
      expect(s.held()).toBe(200);
      expect(await backends(name)).toBe(1);
      expect(await advisoryLocksOf(name)).toBe(200);
      // Each is really held against other sessions.
      await expect(acquireRunLock(t.url, "many-123", "bills")).rejects.toThrow(AccountBusyError);
      await Promise.all(locks.map((l) => l!.release()));
      expect(s.held()).toBe(0);
      expect(await advisoryLocksOf(name)).toBe(0);
      expect(await backends(name)).toBe(1);
    } finally {
      await s.close();
    }
    expect(await backends(name)).toBe(0);
  });

  it("refuses a second holder in this process until release (advisory locks are re-entrant per session)", async () => {
    const { s } = session();
    try {
      // Asked at the same moment: exactly one gets it.
      const both = await Promise.all([s.tryAcquire("same", "bills"), s.tryAcquire("same", "bills")]);
      expect(both.filter((l) => l !== undefined)).toHaveLength(1);
      const one = both.find((l) => l !== undefined)!;
      expect(await s.tryAcquire("same", "bills")).toBeUndefined();
      // Other groups and accounts are free.
      const snapshots = await s.tryAcquire("same", "snapshots");
      const other = await s.tryAcquire("other", "bills");
      expect(snapshots).toBeDefined();
      expect(other).toBeDefined();
      await one.release();
      await one.release(); // twice is harmless
      const again = await s.tryAcquire("same", "bills");
      expect(again).toBeDefined();
      await Promise.all([again!.release(), snapshots!.release(), other!.release()]);
      expect(s.held()).toBe(0);
    } finally {
      await s.close();
    }
  });

  it("excludes another process's acquireRunLock (as `sync --once` takes it) both ways", async () => {
    const { s } = session();
    try {
      const job = (await s.tryAcquire("shared", "bills"))!;
      await expect(acquireRunLock(t.url, "shared", "bills")).rejects.toThrow(AccountBusyError);
      const otherGroup = await acquireRunLock(t.url, "shared", "snapshots");
      await otherGroup.release();
      await job.release();
      const inline = await acquireRunLock(t.url, "shared", "bills");
      expect(await s.tryAcquire("shared", "bills")).toBeUndefined();
      expect(s.held()).toBe(0); // a refusal leaves nothing behind
      await inline.release();
      const back = await s.tryAcquire("shared", "bills");
      expect(back).toBeDefined();
      await back!.release();
    } finally {
      await s.close();
    }
  });

  it("losing the connection aborts every holder and tells onLost; the next take reconnects", async () => {
    const lost: Error[] = [];
    const { s, name } = session((err) => lost.push(err));
    try {
      const held = await Promise.all(["k1", "k2", "k3"].map((a) => s.tryAcquire(a, "bills")));
      const snapshots = (await s.tryAcquire("k1", "snapshots"))!;
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [name]);
      await expect.poll(() => lost.length).toBe(1);
      expect(lost[0]!.message).toMatch(/lost the run-lock connection to PostgreSQL/);
      for (const l of [...held, snapshots]) expect(l!.signal.aborted).toBe(true);
      expect(s.held()).toBe(0);
      // The locks are gone with the session: another process takes one at once.
      const inline = await acquireRunLock(t.url, "k2", "bills");
      await inline.release();
      // Releasing a lost lock is a no-op.
      await held[0]!.release();
      const again = await s.tryAcquire("k1", "bills");
      expect(again).toBeDefined();
      expect(again!.signal.aborted).toBe(false);
      expect(await backends(name)).toBe(1);
      await expect(acquireRunLock(t.url, "k1", "bills")).rejects.toThrow(AccountBusyError);
      await again!.release();
      expect(lost).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  it("marks the group's runs left running by a dead process interrupted, and no others", async () => {
    const { s } = session();
    try {
      const dead = await startRun(t.db, { accountName: "ri", stream: "bills" });
      const deadBackfill = await startRun(t.db, { accountName: "ri", stream: "bills-backfill:1-2" });
      const snapshots = await startRun(t.db, { accountName: "ri", stream: "snapshots" });
      const otherAccount = await startRun(t.db, { accountName: "si", stream: "bills" });
      const lock = (await s.tryAcquire("ri", "bills"))!;
      expect(lock.interruptedRuns).toBe(2);
      await lock.release();
      const rows = await t.db.$queryRawUnsafe<{ id: bigint; outcome: string; error: string | null }[]>(
        "SELECT id, outcome, error FROM sync_runs WHERE id = ANY($1::bigint[]) ORDER BY id",
        [dead, deadBackfill, snapshots, otherAccount],
      );
      expect(rows.map((r) => r.outcome)).toEqual(["interrupted", "interrupted", "running", "running"]);
      expect(rows[0]!.error).toMatch(/its end was never recorded/);
      const next = (await s.tryAcquire("ri", "bills"))!;
      expect(next.interruptedRuns).toBe(0);
      await next.release();
    } finally {
      await s.close();
    }
  });

  it("once closed, ends its connection and takes no more locks", async () => {
    const { s, name } = session();
    const lock = (await s.tryAcquire("c", "bills"))!;
    await s.close();
    expect(lock.signal.aborted).toBe(true);
    expect(await backends(name)).toBe(0);
    await expect(s.tryAcquire("c", "bills")).rejects.toThrow(/closed/);
    const inline = await acquireRunLock(t.url, "c", "bills");
    await inline.release();
  });
});

describe("the Prisma pool", () => {
  it("never opens more than poolMax connections, however many queries wait", async () => {
    // A database of its own: no other pool of this name connects to it.
    const database = await createTestDatabase();
    const db = createDb(database.url, { poolMax: 3 });
    try {
      const seen = await Promise.all(
        Array.from({ length: 50 }, () =>
          db.$queryRawUnsafe<{ n: number }[]>(
            `SELECT (SELECT count(*)::int FROM pg_stat_activity
                     WHERE application_name = $1 AND datname = current_database()) AS n, pg_sleep(0.02)::text`,
            POOL_APPLICATION_NAME,
          ),
        ),
      );
      const counts = seen.map((rows) => rows[0]!.n);
      expect(Math.max(...counts)).toBe(3);
    } finally {
      await db.$disconnect();
      await database.drop();
    }
  });
});
