// @module-tag redis
// The daily re-sweep: a bill filed later than SYNC_LOOKBACK_MS that moves no balance (amount 0:
// no continuity break gives it away) is missed by the incremental syncs and stored by the
// re-sweep, recorded in sync_runs as "bills-resweep", without moving the cursor. Real
// PostgreSQL, Redis and the sandbox over HTTP.
import type { Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processBills } from "../../src/jobs/processors/bills.ts";
import { processResweep } from "../../src/jobs/processors/resweep.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { readCursor } from "../../src/store/cursors.ts";
import { createJobContext, type JobContext } from "../support/job-context.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";

let j: JobContext;
beforeAll(async () => {
  const now = Date.now();
  j = await createJobContext(
    "sweep",
    { seed: 93, billCount: 800, startMs: now - 86_400_000, endMs: now - 1000 },
    { SYNC_LOOKBACK_MS: "600000", SYNC_RESWEEP_HOURS: "48" },
  );
});
afterAll(async () => {
  await j.close();
});

const job = (name: string) => ({ name, data: { account: "sweep" } }) as Job<JobData["bills"]>;

describe("the daily re-sweep", () => {
  it("stores a bill filed later than the lookback that no break gives away, and moves no cursor", async () => {
    // Before any incremental run there is nothing to re-read: the first run reads it all.
    expect(await processResweep(j.ctx, job("resweep"))).toEqual({
      skipped: "no incremental bills run has finished yet",
    });
    await processBills(j.ctx, job("bills"));
    const late = j.sandbox.appendBill({
      cTimeMs: Date.now() - 2 * 3_600_000,
      businessType: "finish_liquidate",
      amount: "0",
      fillFee: "0",
    });
    await processBills(j.ctx, job("bills"));
    expect((await storedBills(j.t.db, "sweep")).some((b) => b.billId === late.billId)).toBe(false);
    const cursor = await readCursor(j.t.db, "sweep", "bills");

    const result = await processResweep(j.ctx, job("resweep"));
    expect(result).toMatchObject({ inserted: 1 });
    expect(await storedBills(j.t.db, "sweep")).toEqual(asRows(j.sandbox.truth()));
    expect(await readCursor(j.t.db, "sweep", "bills")).toBe(cursor);
    const runs = await j.t.db.$queryRawUnsafe<{ stream: string; outcome: string }[]>(
      "SELECT stream, outcome FROM sync_runs WHERE account_name = 'sweep' AND stream = 'bills-resweep'",
    );
    expect(runs).toEqual([{ stream: "bills-resweep", outcome: "ok" }]);
  });

  it("stops at the incremental cursor: a bill after it is the next incremental run's, not a missed one", async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const fresh = j.sandbox.appendBill({ businessType: "deposit", amount: "5" });
    const cursor = (await readCursor(j.t.db, "sweep", "bills"))!;
    expect(fresh.cTimeMs).toBeGreaterThan(cursor);
    const result = await processResweep(j.ctx, job("resweep"));
    expect(result).toMatchObject({ toMs: cursor, inserted: 0 });
    expect((await storedBills(j.t.db, "sweep")).some((b) => b.billId === fresh.billId)).toBe(false);
    await processBills(j.ctx, job("bills"));
    expect(await storedBills(j.t.db, "sweep")).toEqual(asRows(j.sandbox.truth()));
  });
});
