// The bills upgrade and the runs in flight: an account's bills run holding its lease when the
// upgrade starts is waited for (the upgrade says so), and one that holds it past the migrate's lock
// timeout fails the upgrade, naming the run, with nothing copied.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dataSteps } from "../../../src/store/migrate/data-steps.ts";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { createLeaseKeeper, type LeaseKeeper } from "../../../src/store/lease-keeper.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { insertOldBills, migrateToOldSchema, MONTH_MS, withClient } from "./old-books.ts";

describe("the bills upgrade and a bills run in flight", () => {
  let db: TestDatabase;
  let worker: LeaseKeeper;
  beforeEach(async () => {
    db = await createTestDatabase("ls_upgrade_leases");
    await migrateToOldSchema(db.url);
    await withClient(db.url, async (c) => {
      for (const name of ["busy", "idle"])
        await insertOldBills(c, { name, bills: 120, fromMs: MONTH_MS(2026, 1), stepMs: 3_600_000, source: "v2" });
    });
    worker = createLeaseKeeper({ connectionString: db.url }, { ttlMs: 30_000, what: "worker" });
    expect(await worker.tryAcquire("busy", ["bills"])).toBeDefined();
  });
  afterEach(async () => {
    await worker.close();
    await db.drop();
  });

  it("waits for it to end, then copies", async () => {
    const log: string[] = [];
    const migrate = migrateDeploy(db.url, { log: (l) => log.push(l), dataSteps: dataSteps({ batchSize: 50 }) });
    await new Promise((r) => setTimeout(r, 1500));
    expect(log.join("\n")).toMatch(/waiting for the bills run of account "busy" to end \(.* pid \d+ worker\)/);
    expect(log.join("\n")).not.toContain("bills to copy");
    await worker.close();
    expect((await migrate).applied).toContain("20261127200100_bills_view");
    const n = await withClient(db.url, async (c) => (await c.query("SELECT count(*)::int AS n FROM bills")).rows[0].n);
    expect(n).toBe(240);
  });

  it("fails naming it when it holds the lease past the lock timeout, having copied nothing", async () => {
    const error = await migrateDeploy(db.url, { lockTimeoutMs: 800, dataSteps: dataSteps({ batchSize: 50 }) }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(
      /the bills run of account "busy" \(.* pid \d+ worker\) held its lease for over 800 ms/,
    );
    const state = await withClient(
      db.url,
      async (c) =>
        (
          await c.query(`SELECT (SELECT count(*)::int FROM bill_rows) AS rows,
                                (SELECT count(*)::int FROM run_leases WHERE holder LIKE '%bills upgrade%') AS held`)
        ).rows[0],
    );
    expect(state).toEqual({ rows: 0, held: 0 });
  });
});
