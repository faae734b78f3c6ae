// How late the bills an incremental sync adds were first stored (first_seen_at − created_at): the
// figure SYNC_LOOKBACK_MS must cover. Told for incremental runs only: a first run's bills are old
// by design. Real PostgreSQL, the sandbox over HTTP.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../../src/sandbox/index.ts";
import { syncAccountBills } from "../../../src/streams/bills/index.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { sandboxClient } from "../../support/sandbox-client.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

describe("bill lateness", () => {
  it("is told for the bills an incremental run adds, from their creation to when they were stored", async () => {
    const sandbox = await startSandbox({ seed: 81, billCount: 500, limits: null });
    const client = sandboxClient(sandbox);
    const told: number[][] = [];
    const sync = () =>
      syncAccountBills({
        db: t.db,
        client,
        logger: pino({ level: "silent" }),
        accountName: "late",
        backfillFromMs: sandbox.truth()[0]!.cTimeMs,
        lookbackMs: 600_000,
        onLateness: (ms) => told.push(ms),
      });
    try {
      await sync();
      expect(told).toEqual([]); // the first run: the whole history, old by design
      sandbox.appendBill({ cTimeMs: Date.now() - 240_000, amount: "2" }); // filed 4 minutes late
      sandbox.appendBill({ amount: "3" }); // on time
      await sync();
      const lateness = told.flat().sort((a, b) => a - b);
      expect(lateness).toHaveLength(2);
      expect(lateness[0]).toBeGreaterThanOrEqual(0);
      expect(lateness[0]).toBeLessThan(10_000);
      expect(lateness[1]).toBeGreaterThanOrEqual(240_000);
      expect(lateness[1]).toBeLessThan(250_000);
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});
