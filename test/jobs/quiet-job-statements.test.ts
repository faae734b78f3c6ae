// @module-tag redis
// What a quiet account's scheduled bills job sends to PostgreSQL (issue 32: round trips per job):
// every statement of every pg client in this process is counted while the job runs with nothing new
// to fetch. The figures are the bench's (`npm run bench -- --only round-trips`); this holds the line
// so a change that adds a round trip to every job of a fleet fails here.
import type { Job } from "bullmq";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processBills } from "../../src/jobs/processors/bills.ts";
import type { JobData } from "../../src/jobs/queues.ts";
import { createJobContext, type JobContext } from "../support/job-context.ts";

let j: JobContext;
beforeAll(async () => {
  const now = Date.now();
  j = await createJobContext("quiet", { seed: 5, billCount: 40, startMs: now - 3_600_000, endMs: now - 60_000 });
});
afterAll(async () => {
  await j.close();
});

const runJob = () => processBills(j.ctx, { data: { account: "quiet" } } as Job<JobData["bills"]>);

/** The statements `body` sends through any pg client of this process, white space folded. */
async function statementsOf(body: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const c = args[0] as string | { text?: string };
    sent.push((typeof c === "string" ? c : (c?.text ?? "")).replace(/\s+/g, " ").trim());
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await body();
  } finally {
    pg.Client.prototype.query = query;
  }
  return sent;
}

describe("a quiet account's bills job", () => {
  it("sends 12 statements: one each for the lease, the cursor, the run, the write and the verify's reads", async () => {
    await runJob(); // the first sync stores the bills and the exchange's profile
    await runJob();
    const profileBefore = await j.t.db.$queryRawUnsafe<{ xmin: string }[]>(
      "SELECT xmin::text FROM exchange_profiles WHERE account_name = 'quiet'",
    );
    const sent = await statementsOf(runJob);
    const count = (re: RegExp) => sent.filter((s) => re.test(s)).length;
    // Taking the lease marks the interrupted runs in the same statement.
    expect(count(/^UPDATE sync_runs SET outcome = 'interrupted'/)).toBe(0);
    expect(count(/^WITH taken AS \(\s*INSERT INTO run_leases/)).toBe(1);
    // The cursor is read once; the verify reads its state, the bookkeeping and the pending readings at once.
    const verifyBegins = /^WITH made AS \(\s*INSERT INTO verify_state/;
    expect(count(verifyBegins)).toBe(1);
    expect(count(/^SELECT .*sync_state/)).toBe(1);
    // A profile that learnt nothing is not written back, and no row version is made.
    expect(count(/INSERT INTO exchange_profiles/)).toBe(0);
    const profileAfter = await j.t.db.$queryRawUnsafe<{ xmin: string }[]>(
      "SELECT xmin::text FROM exchange_profiles WHERE account_name = 'quiet'",
    );
    expect(profileAfter).toEqual(profileBefore);
    expect(profileAfter).toHaveLength(1);
    expect(sent.length, sent.join("\n")).toBeLessThanOrEqual(12);
  });
});
