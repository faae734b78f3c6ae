// A quiet account at steady state costs one bills request per run (issue 25: a thousand accounts
// on one IP budget). The page-size probe runs only while it can teach something: not when the
// run's whole range is one window, whose own page teaches the same, page size known or not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox, type SandboxOptions } from "../../../src/sandbox/index.ts";
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

/** A sandbox of its own for one test (limits off, history up to a second ago). */
async function withSandbox(o: SandboxOptions, fn: (s: Sandbox) => Promise<void>): Promise<void> {
  const own = await startSandbox({ limits: null, endMs: Date.now() - 1000, ...o });
  try {
    await fn(own);
  } finally {
    await own.close();
  }
}

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

  it("bills read again unchanged are not written; the run that read them says when", async () => {
    // All within the 10-minute lookback: every run reads every bill again.
    await withSandbox({ seed: 16, billCount: 40, startMs: Date.now() - 5 * 60_000 }, async (recent) => {
      const versions = async () =>
        (
          await m.db.$queryRawUnsafe<{ v: string }[]>(
            "SELECT bill_id::text || ':' || xmin::text || '@' || ctid::text AS v FROM bill_rows WHERE account_id = (SELECT id FROM account_keys WHERE name = 'reread') ORDER BY bill_id",
          )
        ).map((r) => r.v);
      await syncFromSandbox(m.db, recent, "reread");
      const before = await versions();
      expect(before).toHaveLength(40);
      for (let run = 0; run < 2; run++) {
        const s = await syncFromSandbox(m.db, recent, "reread");
        expect(s.inserted).toBe(0);
      }
      expect(await versions()).toEqual(before);
      // docs/schema.md, "When was a bill last read": the latest ok run whose window holds the bill.
      const last = recent.truth().at(-1)!;
      const rows = await m.db.$queryRawUnsafe<{ last_read: Date | null; latest: Date }[]>(
        `SELECT (SELECT max(r.finished_at) FROM bills b JOIN sync_runs r
                   ON r.account_name = b.account_name AND r.stream LIKE 'bills%' AND r.outcome = 'ok'
                  AND b.created_at_ms BETWEEN r.window_from_ms AND r.window_to_ms
                 WHERE b.account_name = 'reread' AND b.bill_id = $1) AS last_read,
                (SELECT max(finished_at) FROM sync_runs WHERE account_name = 'reread') AS latest`,
        last.billId,
      );
      expect(rows[0]!.last_read).not.toBeNull();
      expect(rows[0]!.last_read).toEqual(rows[0]!.latest);
    });
  });

  it("an account that never had a bill costs one request per run, its first included", async () => {
    await withSandbox({ seed: 13, billCount: 0 }, async (empty) => {
      for (let run = 0; run < 3; run++) {
        const s = await syncFromSandbox(m.db, empty, "never-billed", { fromMs: Date.now() - 10 * 60_000 });
        expect(s.requests).toBe(1);
      }
      expect(await storedBills(m.db, "never-billed")).toEqual([]);
    });
  });

  it("a sparse account's first sync reads its history in windows as wide as the probe's page allows", async () => {
    const from = Date.now() - 90 * 86_400_000;
    await withSandbox({ seed: 15, billCount: 20, startMs: from }, async (sparse) => {
      const s = await syncFromSandbox(m.db, sparse, "sparse", { fromMs: from });
      // The probe, then 7-day windows: 1 + 13. Grown 2x from an hour, as before, it took 25.
      expect(s.requests).toBeLessThanOrEqual(15);
      expect(await storedBills(m.db, "sparse")).toEqual(asRows(sparse.truth()));
    });
  });

  it("a first run of one window over more bills than a page is still exact without the probe", async () => {
    const from = Date.now() - 10 * 60_000;
    await withSandbox({ seed: 14, billCount: 120, startMs: from, pageCap: 20 }, async (capped) => {
      const s = await syncFromSandbox(m.db, capped, "capped", { fromMs: from });
      expect(s.requests).toBeGreaterThan(6);
      expect(await storedBills(m.db, "capped")).toEqual(asRows(capped.truth()));
    });
  });
});
