// @module-tag redis
// What a quiet account's scheduled bills job sends to PostgreSQL (issue 32: round trips per job):
// every statement of every pg client in this process is counted while the job runs with nothing new
// to fetch. The figures are the bench's (`npm run bench -- --only round-trips`); this holds the line
// so a change that adds a round trip to every job of a fleet fails here, and checks that what the
// joined statements carry is still written.
import type { Job } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processBills } from "../../src/jobs/processors/bills.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { createJobContext, type JobContext } from "../support/job-context.ts";
import { statementsOf } from "../support/statements-sent.ts";

let j: JobContext;
beforeAll(async () => {
  const now = Date.now();
  j = await createJobContext("quiet", { seed: 5, billCount: 40, startMs: now - 3_600_000, endMs: now - 60_000 });
});
afterAll(async () => {
  await j.close();
});

const runJob = () => processBills(j.ctx, { data: { account: "quiet" } } as Job<JobData["bills"]>);

const one = <T>(rows: T[]) => rows[0]!;

describe("a quiet account's bills job", () => {
  it("sends 4 statements: the lease's take, the window write, the verify's start and the lease's release", async () => {
    await runJob(); // the first sync stores the bills and the exchange's profile
    await runJob();
    const read = (sql: string) => j.t.db.$queryRawUnsafe<Record<string, unknown>[]>(sql).then(one);
    const profileBefore = await read("SELECT xmin::text FROM exchange_profiles WHERE account_name = 'quiet'");
    const verifiedBefore = await read(
      "SELECT last_run_at, write_seq::text, check_from_ms::text FROM verify_state WHERE account_name = 'quiet'",
    );
    const { sent } = await statementsOf(runJob);
    expect(sent.length, sent.join("\n")).toBeLessThanOrEqual(4);
    const [take, write, verify, release] = sent;
    // The take reads the cursor and the profile, marks interrupted runs and opens the run.
    expect(take).toMatch(/^WITH taken AS \( INSERT INTO run_leases /);
    expect(take).toMatch(/interrupted AS \( UPDATE sync_runs SET outcome = 'interrupted'/);
    expect(take).toMatch(/job_cursor AS \( ?SELECT cursor_ms FROM sync_state/);
    expect(take).toMatch(/job_profile AS \( ?SELECT account_name, page_size/);
    expect(take).toMatch(/job_run AS \( ?INSERT INTO sync_runs .* WHERE EXISTS \(SELECT 1 FROM taken\)/);
    expect(write).toMatch(/^\/\* ledger-sync: bills window write \*\//);
    // The verify's start finishes the run and reads ahead the chain, the readings and the closes.
    expect(verify).toMatch(/^WITH made AS \( INSERT INTO verify_state/);
    expect(verify).toMatch(/carried AS \(UPDATE sync_runs SET finished_at = now\(\)/);
    expect(verify).toMatch(/NOT ledger_sync_bill_in_range\(/);
    // The release saves the verify's state.
    expect(release).toMatch(/^WITH carried AS \(UPDATE verify_state .*\) UPDATE run_leases SET holder = NULL/);

    // What rode along was written: the run is finished ok, the verify's state saved, the lease free.
    const run = await read(
      "SELECT outcome, finished_at IS NOT NULL AS finished FROM sync_runs WHERE account_name = 'quiet' ORDER BY id DESC",
    );
    expect(run).toEqual({ outcome: "ok", finished: true });
    const verifiedAfter = await read(
      "SELECT last_run_at, write_seq::text, check_from_ms::text, outcome FROM verify_state WHERE account_name = 'quiet'",
    );
    expect((verifiedAfter.last_run_at as Date).getTime()).toBeGreaterThan(
      (verifiedBefore.last_run_at as Date).getTime(),
    );
    expect(verifiedAfter).toMatchObject({
      write_seq: verifiedBefore.write_seq,
      check_from_ms: verifiedBefore.check_from_ms,
      outcome: "pass",
    });
    expect(await read("SELECT holder FROM run_leases WHERE account_name = 'quiet'")).toEqual({ holder: null });
    // A profile that learnt nothing is not written back, and no row version is made.
    expect(sent.filter((s) => /INSERT INTO exchange_profiles/.test(s))).toEqual([]);
    expect(await read("SELECT xmin::text FROM exchange_profiles WHERE account_name = 'quiet'")).toEqual(profileBefore);
  });
});
