// An exchange that filters on a time up to 3 s after the cTime it returns: before, a bill near a
// window's edge was dropped by every window (4 of 6,080 missing, exit 0). Now the copy is exact,
// the offset is learnt, and the incremental cursor stays that far behind the windows proven.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../../src/sandbox/index.ts";
import { readCursor } from "../../../src/store/cursors.ts";
import { readExchangeFacts } from "../../../src/store/exchange-profiles.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { asRows, storedBills, syncFromSandbox } from "../../support/sandbox-sync.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

describe("an exchange filtering on a time after the bill's own", () => {
  it("copies exactly, keeps the offset, and leaves the cursor that far behind", async () => {
    const sandbox = await startSandbox({ seed: 61, billCount: 6080, bursts: 2, limits: null, filterSkewMs: 3000 });
    try {
      const s = await syncFromSandbox(t.db, sandbox, "skew");
      expect(await storedBills(t.db, "skew")).toEqual(asRows(sandbox.truth()));
      expect(s.exchange.filterOffsetMs).toBeGreaterThan(0);
      expect(s.exchange.filterOffsetMs).toBeLessThanOrEqual(3000);
      expect((await readExchangeFacts(t.db, "skew"))?.filterOffsetMs).toBe(s.exchange.filterOffsetMs);
      expect(await readCursor(t.db, "skew", "bills")).toBe(s.toMs - s.exchange.filterOffsetMs);

      // A bill just behind the cursor that the exchange files a little later: the next run's
      // lookback reads it.
      const late = sandbox.appendBill({
        cTimeMs: Date.now() - 1000,
        businessType: "deposit",
        coin: "USDT",
        symbol: "",
        amount: "3",
        fillFee: "0",
      });
      await syncFromSandbox(t.db, sandbox, "skew", { lookbackMs: 0 });
      expect((await storedBills(t.db, "skew")).some((b) => b.billId === late.billId)).toBe(true);
      expect(await storedBills(t.db, "skew")).toEqual(asRows(sandbox.truth()));
    } finally {
      await sandbox.close();
    }
  });
});
