// @module-tag redis
// The worker's bills job checks the closed periods a write touched, keeps reporting a changed one on
// every run until it is closed again, and publishes the count as ledger_sync_closed_periods_changed.
// Real PostgreSQL, Redis (the account lock) and the sandbox exchange over HTTP; the processor runs as
// the worker runs it.
import type { Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processBills } from "../../src/jobs/processors/bills.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { closePeriod } from "../../src/periods/close-period.ts";
import { createJobContext, type JobContext } from "../support/job-context.ts";
import { AUGUST, HISTORY, reread } from "./fixture.ts";

let j: JobContext;
beforeAll(async () => {
  j = await createJobContext("w", { seed: 19, billCount: 2000, ...HISTORY });
});
afterAll(async () => {
  await j.close();
});

const runJob = () =>
  processBills(j.ctx, { data: { account: "w" } } as Job<JobData["bills"]>) as Promise<{ verify: { ok: boolean } }>;
const gauge = async () => {
  const m = /^ledger_sync_closed_periods_changed\{account="w"\} (\d+)$/m.exec(await j.metrics.registry.metrics());
  return m ? Number(m[1]) : undefined;
};
const closeAugust = () =>
  closePeriod(j.t.db, {
    account: "w",
    period: AUGUST,
    coinNames: {},
    lookbackMs: 600_000,
    closedBy: "worker-test",
    // No COIN_NAMES, so no reported figure: the roll-forward is unreconcilable.
    acceptUntied: "no collateral snapshot paired in this test",
  });
const books = () => ({ t: j.t, sandbox: j.sandbox, account: "w", close: j.close });

describe("the bills job and closed periods", () => {
  it("reports a late bill in a closed period on every run until the period is closed again", async () => {
    expect((await runJob()).verify.ok).toBe(true);
    expect(await gauge()).toBe(0);
    expect((await closeAugust()).status).toBe("closed");
    expect((await runJob()).verify.ok).toBe(true);
    expect(await gauge()).toBe(0);

    // A bill of amount 0 filed late into August: the balances still chain, only the seal shows it.
    const late = j.sandbox.appendBill({ coin: "USDT", amount: "0", cTimeMs: AUGUST.fromMs + 5 * 86_400_000 + 77 });
    await reread(books(), AUGUST.fromMs, AUGUST.toMs - 1);
    expect((await runJob()).verify.ok).toBe(false);
    expect(await gauge()).toBe(1);
    const [state] = await j.t.db.$queryRawUnsafe<
      { from_ms: string; report: { checks: { check: string; summary: string }[] } }[]
    >("SELECT check_from_ms::text AS from_ms, report FROM verify_state WHERE account_name = 'w'");
    const check = state!.report.checks.find((c) => c.check === "closed-period")!;
    expect(check.summary).toContain(`bill ${late.billId} added`);

    // The next run starts after the newest bill, far behind August's end: the period is still reported.
    expect((await runJob()).verify.ok).toBe(false);
    expect(await gauge()).toBe(1);
    const [after] = await j.t.db.$queryRawUnsafe<{ from_ms: string }[]>(
      "SELECT check_from_ms::text AS from_ms FROM verify_state WHERE account_name = 'w'",
    );
    expect(Number(after!.from_ms)).toBeGreaterThan(AUGUST.toMs);

    expect((await closeAugust()).status).toBe("closed");
    expect((await runJob()).verify.ok).toBe(true);
    expect(await gauge()).toBe(0);
  });
});
