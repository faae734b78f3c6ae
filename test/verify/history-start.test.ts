// verify over a stored history that begins mid-chain: against an exchange keeping 90 days of a
// 200-day history, the sync starts at the horizon, and verify says where the history begins and
// why, instead of a continuity break; after a sync that began late (BACKFILL_FROM), it says that.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.ts";
import { verifyAccount } from "../../src/verify/verify-account.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { syncFromSandbox } from "../support/sandbox-sync.ts";

const DAY = 86_400_000;
let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

const verify = (account: string) =>
  verifyAccount(t.db, { account, coinNames: {}, lookbackMs: 600_000 }).then((v) => v.report);

describe("verify: where the stored history begins", () => {
  it("names the exchange's horizon when the history begins there, and reports no break", async () => {
    const now = Date.now();
    const sandbox = await startSandbox({
      seed: 41,
      billCount: 1500,
      startMs: now - 200 * DAY,
      endMs: now - 1000,
      limits: null,
      historyDays: 90,
    });
    try {
      const s = await syncFromSandbox(t.db, sandbox, "horizon", { fromMs: now - 200 * DAY });
      expect(s.historyFromMs).not.toBeNull();
      const report = await verify("horizon");
      expect(report.ok).toBe(true);
      const starts = report.checks.filter((c) => c.check === "history-start");
      expect(starts.length).toBeGreaterThan(0);
      for (const c of starts) {
        expect(c.status).toBe("pass");
        expect(c.summary).toMatch(
          /begins mid-chain at bill \d+ .*the exchange keeps history only from \d{4}-.*earlier bills are not retrievable/,
        );
      }
      expect(report.checks.filter((c) => c.check === "balance-continuity").every((c) => c.status === "pass")).toBe(
        true,
      );
    } finally {
      await sandbox.close();
    }
  });

  it("says the sync began later than the history when no horizon is known", async () => {
    const sandbox = await startSandbox({ seed: 42, billCount: 800, limits: null });
    try {
      const truth = sandbox.truth();
      await syncFromSandbox(t.db, sandbox, "late-start", { fromMs: truth[400]!.cTimeMs });
      const report = await verify("late-start");
      const starts = report.checks.filter((c) => c.check === "history-start");
      expect(starts.length).toBeGreaterThan(0);
      expect(starts[0]!.summary).toMatch(/bills before it were not synced \(BACKFILL_FROM/);
    } finally {
      await sandbox.close();
    }
  });
});
