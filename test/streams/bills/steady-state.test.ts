// A quiet account at steady state costs one bills request per run (issue 25: a thousand accounts
// on one IP budget). The page-size probe runs only while it can teach something: not when a page
// size is known and the run's whole range is one window, whose own page teaches the same.
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

  it("still probes the page size on a first run, when nothing is known of it", async () => {
    const first = await syncFromSandbox(m.db, sandbox, "fresh-account", { fromMs: Date.now() - 10 * 60_000 });
    // One probe, one window: the probe is what learns the page size before anything is stored.
    expect(first.requests).toBe(2);
  });
});
