// Concurrent migrates serialise on Prisma's migration lock (advisory lock 72707369, taken per
// transaction): every migration is applied once, and a deploy waits for another holder (Prisma's
// CLI holds it per session), or gives up after its timeout naming the lock.
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { MIGRATE_LOCK_KEY } from "../../../src/store/migrate/migrate-lock.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { committedMigrations, historyRows, query } from "./helpers.ts";

describe("concurrent migrates", () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase("ls_migconc");
  });
  afterEach(async () => {
    await db.drop();
  });

  it("apply every migration exactly once when four run at the same time", async () => {
    const names = await committedMigrations();
    const results = await Promise.all([1, 2, 3, 4].map(() => migrateDeploy(db.url)));
    const applied = results.flatMap((result) => result.applied);
    expect(applied.sort()).toEqual(names);
    // Each migration by exactly one of them (they may share the work).
    expect(new Set(applied).size).toBe(applied.length);
    expect((await historyRows(db.url)).map((row) => row.migration_name)).toEqual(names);
  });

  it("wait for the holder of the lock, and fail naming it past the timeout", async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      expect(MIGRATE_LOCK_KEY).toBe(72707369);
      await holder.query("SELECT pg_advisory_lock($1)", [MIGRATE_LOCK_KEY]);
      const error = await migrateDeploy(db.url, { lockTimeoutMs: 300 }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(
        /another migrate held the migration lock \(advisory lock 72707369\) for over 300 ms/,
      );
      expect(await query(db.url, "SELECT to_regclass('_prisma_migrations') AS t")).toEqual([{ t: null }]);

      const messages: string[] = [];
      const waiting = migrateDeploy(db.url, { log: (m) => messages.push(m) });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(messages.join("\n")).toContain("waiting for another migrate to finish");
      await holder.query("SELECT pg_advisory_unlock($1)", [MIGRATE_LOCK_KEY]);
      expect((await waiting).applied).toEqual(await committedMigrations());
    } finally {
      await holder.end();
    }
  });
});
