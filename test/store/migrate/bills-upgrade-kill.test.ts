// The bills upgrade killed for real: a migrate in a process of its own (upgrade-child.ts) gets
// SIGKILL in the middle of the copy. Its leases stay in run_leases; the next migrate, on the same
// machine, sees their holder is gone, takes them over, resumes the copy from the last committed
// batch and finishes it: every bill as it was, through the view. And the books written to between
// a stopped migrate and the next one, when no lease keeps writers off (they expire): a bill revised
// after it was copied, a late bill behind the copy's cursor, a new one after it; the next migrate
// finds each and copies the account again.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { dataSteps } from "../../../src/store/migrate/data-steps.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { waitFor } from "../../support/processes.ts";
import type { CopiedBatch } from "../../../src/store/migrate/copy-bills-batch.ts";
import { ALL_BILLS, insertOldBills, migrateToOldSchema, MONTH_MS, reviseBill, withClient } from "./old-books.ts";

const BATCH = 40;
let db: TestDatabase;
let before: unknown[];
const killed = { copied: 0, holders: [] as string[], output: "" };
const resumed: string[] = [];

const copied = () =>
  withClient(db.url, async (c) => {
    const exists = await c.query("SELECT to_regclass('bill_rows_upgrade') IS NOT NULL AS yes");
    if (!exists.rows[0].yes) return 0;
    return Number((await c.query("SELECT coalesce(sum(copied), 0) AS n FROM bill_rows_upgrade")).rows[0].n);
  });

describe("the bills upgrade killed with SIGKILL", () => {
  beforeAll(async () => {
    db = await createTestDatabase("ls_upgrade_kill");
    await migrateToOldSchema(db.url);
    await withClient(db.url, async (c) => {
      await insertOldBills(c, {
        name: "solo",
        bills: 1200,
        fromMs: MONTH_MS(2026, 1),
        stepMs: 7_200_000,
        source: "v2",
      });
      before = (await c.query(ALL_BILLS)).rows;
    });
    const child = spawn(
      process.execPath,
      ["--import", "tsx", resolve("test/store/migrate/upgrade-child.ts"), db.url, String(BATCH), "40"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout.on("data", (d) => (killed.output += d));
    child.stderr.on("data", (d) => (killed.output += d));
    const exited = new Promise((r) => child.once("exit", r));
    await waitFor("the child's copy under way", async () => (await copied()) >= 3 * BATCH, 60_000, 50);
    child.kill("SIGKILL");
    await exited;
    killed.copied = await copied();
    killed.holders = await withClient(db.url, async (c) =>
      (await c.query("SELECT holder FROM run_leases WHERE holder IS NOT NULL")).rows.map((r) => String(r.holder)),
    );
    await migrateDeploy(db.url, { log: (l) => resumed.push(l), dataSteps: dataSteps({ batchSize: BATCH }) });
  }, 180_000);

  afterAll(async () => {
    await db?.drop();
  });

  it("was killed mid-copy, its lease left behind", () => {
    expect(killed.copied).toBeGreaterThanOrEqual(3 * BATCH);
    expect(killed.copied).toBeLessThan(1200);
    expect(killed.copied % BATCH).toBe(0);
    expect(killed.holders).toEqual([expect.stringMatching(/ migrate \(bills upgrade\)$/)]);
  });

  it("resumed from the last committed batch on the next migrate, and finished", () => {
    const log = resumed.join("\n");
    expect(log).toContain(`resuming: ${killed.copied.toLocaleString("en-US")} of 1,200 bills copied before`);
    expect(log).toContain(`${(1200 - killed.copied).toLocaleString("en-US")} by this run`);
    expect(log).toContain("applied migration 20261127200100_bills_view");
  });

  it("gives back every bill through the view as it was", async () => {
    await withClient(db.url, async (c) => {
      expect((await c.query(ALL_BILLS)).rows).toEqual(before);
      expect((await c.query("SELECT count(*)::int AS n FROM bill_rows")).rows[0].n).toBe(1200);
      expect((await c.query("SELECT holder FROM run_leases WHERE holder IS NOT NULL")).rows).toEqual([]);
    });
  });
});

describe("the bills upgrade, with bills written between two migrates", () => {
  let db2: TestDatabase;
  let before2: unknown[];
  const log: string[] = [];
  const count = (sql: string) => withClient(db2.url, async (c) => Number((await c.query(sql)).rows[0].n));

  beforeAll(async () => {
    db2 = await createTestDatabase("ls_upgrade_between");
    await migrateToOldSchema(db2.url);
    const a = { bills: 300, fromMs: MONTH_MS(2026, 1), stepMs: 7_200_000, source: "v2" } as const;
    await withClient(db2.url, async (c) => {
      await insertOldBills(c, { name: "duo", ...a });
      await insertOldBills(c, { name: "solo", ...a }, 1);
    });
    // duo whole, then one batch of solo.
    let solo = 0;
    const stop = (b: CopiedBatch) => {
      if (b.account === "solo" && ++solo === 2) throw new Error("stopped (test)");
    };
    await migrateDeploy(db2.url, {
      dataSteps: dataSteps({ batchSize: BATCH, concurrency: 1, beforeCommit: stop }),
    }).catch(() => undefined);
    await withClient(db2.url, async (c) => {
      const first = await c.query("SELECT bill_id FROM bills WHERE account_name = 'solo' ORDER BY created_at LIMIT 1");
      await reviseBill(c, "solo", String(first.rows[0].bill_id));
      for (const [id, at] of [
        ["700000000000000001", "2026-01-02T03:04:05.678Z"],
        ["700000000000000002", "2026-03-01T00:00:00.000Z"],
      ] as const)
        await c.query(
          `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee,
                              created_at, created_at_ms, raw, source)
           VALUES ('duo', $1, 'USDT', NULL, 'deposit', 5, 5, 0, $2::timestamptz, $3,
                   jsonb_build_object('billId', $1::text), 'v2')`,
          [id, at, Date.parse(at)],
        );
      before2 = (await c.query(ALL_BILLS)).rows;
    });
    await migrateDeploy(db2.url, { log: (l) => log.push(l), dataSteps: dataSteps({ batchSize: BATCH }) });
  }, 180_000);
  afterAll(async () => {
    await db2?.drop();
  });

  it("stopped with duo copied whole and one batch of solo", async () => {
    expect(log.join("\n")).toContain(`resuming: ${(300 + BATCH).toLocaleString("en-US")} of 600 bills copied before`);
  });

  it("copied solo again for its bill revised after it was copied, duo on and then again for its late bill", () => {
    const text = log.join("\n");
    expect(text).toContain('a bill of account "solo" was revised after it was copied: copying it again');
    expect(text).toMatch(/account "duo" has 302 bills in bills and 300 copied .*copying it on from where it stopped/);
    expect(text).toMatch(/account "duo" has 302 bills in bills and 301 copied .*copying it again from its start/);
    expect(text).toContain("applied migration 20261127200100_bills_view");
  });

  it("gives back every bill as the old table last held it", async () => {
    await withClient(db2.url, async (c) => expect((await c.query(ALL_BILLS)).rows).toEqual(before2));
    expect(await count("SELECT count(*) AS n FROM bill_rows")).toBe(602);
  });
});
