// @module-tag redis
// The scheduled bills job's run is opened by the statement that takes its lease (streams/bills/
// job-start.ts), and its sync_runs row still says what happened: ok with the window the plan used,
// and failed, finished, when the job throws before the stream took the row (a v3 account whose
// stored resume point is not a v3 cursor). Real PostgreSQL, Redis and the sandbox over HTTP.
import type { Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processBills } from "../../src/jobs/processors/bills.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { incrementalStart } from "../../src/streams/bills/index.ts";
import { createJobContext, type JobContext } from "../support/job-context.ts";

let j: JobContext;
beforeAll(async () => {
  const now = Date.now();
  j = await createJobContext("started", { seed: 11, billCount: 30, startMs: now - 3_600_000, endMs: now - 60_000 });
});
afterAll(async () => {
  await j.close();
});

const runJob = () => processBills(j.ctx, { data: { account: "started" } } as Job<JobData["bills"]>);
const lastRun = async () =>
  (
    await j.t.db.$queryRawUnsafe<
      { stream: string; from_ms: string; to_ms: string; outcome: string; error: string | null; finished: boolean }[]
    >(
      `SELECT stream, window_from_ms::text AS from_ms, window_to_ms::text AS to_ms, outcome, error,
              finished_at IS NOT NULL AS finished
       FROM sync_runs WHERE account_name = 'started' ORDER BY id DESC LIMIT 1`,
    )
  )[0]!;
const cursor = async () =>
  Number(
    (
      await j.t.db.$queryRawUnsafe<{ ms: string }[]>(
        "SELECT cursor_ms::text AS ms FROM sync_state WHERE account_name = 'started' AND stream = 'bills'",
      )
    )[0]!.ms,
  );

describe("the bills job's run, opened with its lease", () => {
  it("is finished ok, with the window the plan used", async () => {
    const before = Date.now();
    await runJob();
    const first = await lastRun();
    expect(first).toMatchObject({ stream: "bills", outcome: "ok", finished: true });
    expect(Number(first.from_ms)).toBe(j.sandbox.truth()[0]!.cTimeMs);
    expect(Number(first.to_ms)).toBeGreaterThanOrEqual(before);
    const cursorMs = await cursor();
    await runJob();
    const second = await lastRun();
    expect(second).toMatchObject({ outcome: "ok", finished: true });
    expect(Number(second.from_ms)).toBe(incrementalStart(cursorMs, 0, j.ctx.config.lookbackMs));
  });

  it("is finished on its own when the verify cannot start (which would have carried its end)", async () => {
    // The verify's start reads the pending wallet readings: without their table it fails, the sync does not.
    await j.t.db.$executeRawUnsafe("ALTER TABLE wallet_readings RENAME TO wallet_readings_away");
    let result: { verify?: { ok: boolean; error?: string } };
    try {
      result = (await runJob()) as typeof result;
    } finally {
      await j.t.db.$executeRawUnsafe("ALTER TABLE wallet_readings_away RENAME TO wallet_readings");
    }
    expect(result.verify).toMatchObject({ ok: false, error: expect.stringMatching(/wallet_readings/) });
    expect(await lastRun()).toMatchObject({ outcome: "ok", finished: true });
  });

  it("is finished failed when the job throws before the stream takes it, and the lease is freed", async () => {
    await j.t.db.$executeRawUnsafe(
      "UPDATE sync_state SET resume = '{\"not\": \"a v3 cursor\"}'::jsonb WHERE account_name = 'started' AND stream = 'bills'",
    );
    const rt = j.ctx.accounts.get("started")!;
    (rt.account as { billsSource: string }).billsSource = "v3";
    try {
      await expect(runJob()).rejects.toThrow(/is not a v3 cursor/);
    } finally {
      (rt.account as { billsSource: string }).billsSource = "v2";
      await j.t.db.$executeRawUnsafe("UPDATE sync_state SET resume = NULL WHERE account_name = 'started'");
    }
    expect(await lastRun()).toMatchObject({
      outcome: "failed",
      finished: true,
      error: expect.stringMatching(/v3 cursor/),
    });
    const [lease] = await j.t.db.$queryRawUnsafe<{ holder: string | null }[]>(
      "SELECT holder FROM run_leases WHERE account_name = 'started' AND stream_group = 'bills'",
    );
    expect(lease!.holder).toBeNull();
    await runJob();
    expect(await lastRun()).toMatchObject({ outcome: "ok" });
  });
});
