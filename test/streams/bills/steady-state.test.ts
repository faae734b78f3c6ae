// A quiet account at steady state costs one bills request per run (issue 25: a thousand accounts
// on one IP budget). The page-size probe runs only while it can teach something: not when the
// run's whole range is one window, whose own page teaches the same, page size known or not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../../src/sandbox/index.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { asRows, storedBills, syncFromSandbox } from "../../support/sandbox-sync.ts";

let m: MigratedDb;
let sandbox: Sandbox;
beforeAll(async () => {
  m = await createMigratedDb();
  sandbox = await startSandbox({ seed: 12, billCount: 30, limits: null, startMs: Date.now() - 3 * 86_400_000 });
});
afterAll(async () => {
  await sandbox.close();
  await m.close();
});

describe("a quiet account at steady state", () => {
  it("costs one request per run, and a new bill still arrives exactly", async () => {
    const first = await syncFromSandbox(m.db, sandbox, "quiet");
    expect(first.requests).toBeGreaterThan(1);
    const again = await syncFromSandbox(m.db, sandbox, "quiet");
    expect(again.requests).toBe(1);
    sandbox.appendBill();
    const after = await syncFromSandbox(m.db, sandbox, "quiet");
    expect(after.requests).toBe(1);
    expect(after.inserted).toBe(1);
    expect(await storedBills(m.db, "quiet")).toEqual(asRows(sandbox.truth()));
  });

  it("an account that never had a bill costs one request per run, its first included", async () => {
    const empty = await startSandbox({ seed: 13, billCount: 0, limits: null });
    try {
      for (let run = 0; run < 3; run++) {
        const s = await syncFromSandbox(m.db, empty, "never-billed", { fromMs: Date.now() - 10 * 60_000 });
        expect(s.requests).toBe(1);
      }
      expect(await storedBills(m.db, "never-billed")).toEqual([]);
    } finally {
      await empty.close();
    }
  });

  it("a first run of one window over more bills than a page is still exact without the probe", async () => {
    const now = Date.now();
    const capped = await startSandbox({
      seed: 14,
      billCount: 120,
      limits: null,
      startMs: now - 10 * 60_000,
      endMs: now - 1000,
      pageCap: 20,
    });
    try {
      const s = await syncFromSandbox(m.db, capped, "capped", { fromMs: now - 10 * 60_000 });
      expect(s.requests).toBeGreaterThan(6);
      expect(await storedBills(m.db, "capped")).toEqual(asRows(capped.truth()));
    } finally {
      await capped.close();
    }
  });
});
