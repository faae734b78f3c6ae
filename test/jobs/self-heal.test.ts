// @module-tag redis
// A bill the exchange files late, far behind the cursor (twice SYNC_LOOKBACK_MS): the worker's
// verify reports the continuity break it leaves, and heals it in the first cycle after the bill
// appears, without a person; a re-fetch that finds the gap still there backs off. Real
// PostgreSQL, Redis and the sandbox over HTTP; the bills job runs as the worker runs it.
import type { Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processBills } from "../../src/jobs/processors/bills.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { readVerifyStatus } from "../../src/verify/verify-status.ts";
import { createJobContext, type JobContext } from "../support/job-context.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";

const LOOKBACK = 600_000;
let j: JobContext;
beforeAll(async () => {
  const now = Date.now();
  j = await createJobContext(
    "heal",
    { seed: 91, billCount: 1500, startMs: now - 2 * 86_400_000, endMs: now - 1000 },
    { BILLS_INTERVAL_MS: "1000", SYNC_LOOKBACK_MS: String(LOOKBACK) },
  );
});
afterAll(async () => {
  await j.close();
});

const runJob = () => processBills(j.ctx, { data: { account: "heal" } } as Job<JobData["bills"]>);
const series = async (name: string) => {
  const m = new RegExp(`^ledger_sync_${name}\\{account="heal"\\} (\\d+)$`, "m").exec(
    await j.metrics.registry.metrics(),
  );
  return m ? Number(m[1]) : undefined;
};

describe("late bills heal themselves", () => {
  it("a bill filed 2 x SYNC_LOOKBACK_MS behind the cursor is stored in the first cycle after it appears; the break is reported, then healed", async () => {
    // The latest bill at least twice the lookback old that has a later bill of its coin after it.
    const truth = j.sandbox.truth();
    const limit = Date.now() - 2 * LOOKBACK;
    const late = [...truth]
      .reverse()
      .find(
        (b) => b.cTimeMs < limit && truth.some((x) => x.coin === b.coin && x.cTimeMs > b.cTimeMs) && b.amount !== "0",
      )!;
    j.sandbox.hideBill(late.billId);

    await runJob();
    let stored = await storedBills(j.t.db, "heal");
    expect(stored.some((b) => b.billId === late.billId)).toBe(false);
    expect(await series("breaks_open")).toBe(1);
    const reported = await readVerifyStatus(j.t.db, "heal");
    expect(reported[0]!.outcome).toBe("fail");
    expect(reported[0]!.failing.join("\n")).toMatch(/balance-continuity/);

    // The exchange now serves it; the re-fetch's backoff (one BILLS_INTERVAL_MS) has passed.
    j.sandbox.revealBill(late.billId);
    await new Promise((res) => setTimeout(res, 1100));
    const result = await runJob();
    stored = await storedBills(j.t.db, "heal");
    expect(stored).toEqual(asRows(j.sandbox.truth()));
    expect(await series("breaks_healed_total")).toBe(1);
    expect(await series("breaks_open")).toBe(0);
    expect(result.verify).toMatchObject({ ok: true });
    expect((await readVerifyStatus(j.t.db, "heal"))[0]!.outcome).toBe("pass");
  });
});
