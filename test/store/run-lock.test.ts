// One writer per account and stream group, on real PostgreSQL: a second taker is refused (or
// waits), other accounts and groups are not held up, a holder whose connection dies frees the
// lock and is told, and runs left "running" by a dead process are marked interrupted.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccountBusyError, acquireRunLock, acquireRunLocks } from "../../src/store/run-lock.ts";
import { startRun } from "../../src/store/sync-runs.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

describe("account run lock", () => {
  it("admits one holder per account and group; other accounts and groups are free", async () => {
    const one = await acquireRunLock(t.url, "a", "bills");
    await expect(acquireRunLock(t.url, "a", "bills")).rejects.toThrow(AccountBusyError);
    await expect(acquireRunLock(t.url, "a", "bills")).rejects.toThrow(
      /account "a" is being written by another process \(bills\)/,
    );
    const otherGroup = await acquireRunLock(t.url, "a", "snapshots");
    const otherAccount = await acquireRunLock(t.url, "b", "bills");
    await Promise.all([otherGroup.release(), otherAccount.release()]);
    await one.release();
    const again = await acquireRunLock(t.url, "a", "bills");
    await again.release();
  });

  it("with wait, takes the lock once the holder lets go", async () => {
    const held = await acquireRunLock(t.url, "w", "bills");
    const started = Date.now();
    const waiting = acquireRunLocks(t.url, "w", ["snapshots", "bills"], { wait: true });
    setTimeout(() => void held.release(), 800);
    const got = await waiting;
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    await got.release();
  });

  it("a holder whose connection dies frees the lock, and its signal tells it to stop", async () => {
    const held = await acquireRunLock(t.url, "k", "bills");
    const admin = new pg.Client({ connectionString: t.url });
    await admin.connect();
    try {
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ledger-sync run lock bills' AND datname = current_database() AND pid <> pg_backend_pid()",
      );
    } finally {
      await admin.end();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(held.signal.aborted).toBe(true);
    const next = await acquireRunLock(t.url, "k", "bills");
    await next.release();
    await held.release();
  });

  it("marks the group's runs left running by a dead process interrupted, and no others", async () => {
    const dead = await startRun(t.db, { accountName: "r", stream: "bills" });
    const deadBackfill = await startRun(t.db, { accountName: "r", stream: "bills-backfill:1-2" });
    const snapshots = await startRun(t.db, { accountName: "r", stream: "snapshots" });
    const otherAccount = await startRun(t.db, { accountName: "s", stream: "bills" });
    const lock = await acquireRunLock(t.url, "r", "bills");
    expect(lock.interruptedRuns).toBe(2);
    await lock.release();
    const rows = await t.db.$queryRawUnsafe<{ id: bigint; outcome: string; error: string | null }[]>(
      "SELECT id, outcome, error FROM sync_runs WHERE id = ANY($1::bigint[]) ORDER BY id",
      [dead, deadBackfill, snapshots, otherAccount],
    );
    expect(rows.map((r) => r.outcome)).toEqual(["interrupted", "interrupted", "running", "running"]);
    expect(rows[0]!.error).toMatch(/its end was never recorded/);
  });
});
