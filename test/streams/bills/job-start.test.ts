// The scheduled bills job's start in its lease's take (streams/bills/job-start.ts), on real
// PostgreSQL: one statement takes the lease, reads the cursor and the exchange profile and opens the
// run with the window the plan gives; a busy take opens nothing; a take whose answer cannot be used
// finishes its run interrupted; recordRun finishes the opened run, and only its own.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_FACTS, readExchangeFacts, saveExchangeFacts } from "../../../src/store/exchange-profiles.ts";
import { createLeaseKeeper, type LeaseKeeper } from "../../../src/store/lease-keeper.ts";
import { recordRun } from "../../../src/store/sync-runs.ts";
import { incrementalStart, incrementalStartSql } from "../../../src/streams/bills/incremental-start.ts";
import { billsJobRider, readBillsJobStart } from "../../../src/streams/bills/job-start.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { statementsOf } from "../../support/statements-sent.ts";

let t: MigratedDb;
let pool: pg.Pool;
let keeper: LeaseKeeper;
beforeAll(async () => {
  t = await createMigratedDb();
  pool = new pg.Pool({ connectionString: t.url, max: 2 });
  keeper = createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "job start test" });
});
afterAll(async () => {
  await keeper.close();
  await pool.end();
  await t.close();
});

const BACKFILL = 1_700_000_000_000;
const LOOKBACK = 600_000;
const rider = (account: string, untilMs: number) =>
  billsJobRider({ account, backfillFromMs: BACKFILL, lookbackMs: LOOKBACK, untilMs });
const runsOf = async (account: string) =>
  (
    await pool.query<{ stream: string; from_ms: string | null; to_ms: string | null; outcome: string; error: string }>(
      `SELECT stream, window_from_ms::text AS from_ms, window_to_ms::text AS to_ms, outcome, error
       FROM sync_runs WHERE account_name = $1 ORDER BY id`,
      [account],
    )
  ).rows;

describe("the bills job's start", () => {
  it("computes the run's start in SQL as the plan does", async () => {
    for (const cursor of [undefined, 0, 5, LOOKBACK - 1, LOOKBACK, BACKFILL + 123_456]) {
      const { rows } = await pool.query<{ ms: string }>(
        `SELECT ${incrementalStartSql("$1::bigint", "$2", "$3")}::text AS ms`,
        [cursor === undefined ? null : String(cursor), String(BACKFILL), String(LOOKBACK)],
      );
      expect(Number(rows[0]!.ms), `cursor ${cursor}`).toBe(incrementalStart(cursor, BACKFILL, LOOKBACK));
    }
  });

  it("takes the lease, reads the cursor and the profile and opens the run in one statement", async () => {
    const cursorMs = BACKFILL + 3_600_000;
    await pool.query(
      "INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at) VALUES ('j1', 'bills', $1, now())",
      [String(cursorMs)],
    );
    await saveExchangeFacts(t.db, "j1", { ...NO_FACTS, pageSize: 100, maxSpanMs: 86_400_000, filterOffsetMs: 7 });
    const untilMs = cursorMs + 60_000;
    const { result: lock, sent } = await statementsOf(() => keeper.tryAcquire("j1", ["bills"], rider("j1", untilMs)));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^WITH taken AS \( INSERT INTO run_leases .* job_run AS \( ?INSERT INTO sync_runs/);
    const start = readBillsJobStart("j1", lock!.carried);
    expect(start.cursorMs).toBe(cursorMs);
    expect(start.facts).toEqual(await readExchangeFacts(t.db, "j1"));
    expect(start.run).toMatchObject({
      accountName: "j1",
      stream: "bills",
      windowFromMs: incrementalStart(cursorMs, BACKFILL, LOOKBACK),
      windowToMs: untilMs,
      claimed: false,
    });
    expect(await runsOf("j1")).toMatchObject([{ stream: "bills", outcome: "running", to_ms: String(untilMs) }]);

    // Busy: another keeper's take with the same rider opens nothing.
    const other = createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "other" });
    try {
      expect(await other.tryAcquire("j1", ["bills"], rider("j1", untilMs))).toBeUndefined();
    } finally {
      await other.close();
    }
    expect(await runsOf("j1")).toHaveLength(1);

    // recordRun takes the row only for its own run; then finishes it.
    const wrong = {
      accountName: "j1",
      stream: "bills",
      windowFromMs: start.run.windowFromMs! + 1,
      windowToMs: untilMs,
    };
    await expect(
      recordRun(
        t.db,
        wrong,
        async () => 1,
        () => ({ pages: 1, recordsFetched: 0, recordsNew: 0, recordsChanged: 0, quarantined: 0 }),
        () => false,
        start.run,
      ),
    ).rejects.toThrow(/is not this run/);
    expect(start.run.claimed).toBe(false);
    const own = { accountName: "j1", stream: "bills", windowFromMs: start.run.windowFromMs!, windowToMs: untilMs };
    await recordRun(
      t.db,
      own,
      async () => 1,
      () => ({ pages: 2, recordsFetched: 3, recordsNew: 1, recordsChanged: 0, quarantined: 0 }),
      () => false,
      start.run,
    );
    expect(start.run.claimed).toBe(true);
    expect(await runsOf("j1")).toMatchObject([{ outcome: "ok" }]);
    await lock!.release();
  });

  it("starts a new account's run at BACKFILL_FROM, with no profile", async () => {
    const lock = await keeper.tryAcquire("j2", ["bills"], rider("j2", BACKFILL + 1000));
    const start = readBillsJobStart("j2", lock!.carried);
    expect(start).toMatchObject({
      cursorMs: null,
      facts: null,
      run: { windowFromMs: BACKFILL, windowToMs: BACKFILL + 1000 },
    });
    await lock!.release();
  });

  it("finishes the run interrupted when the take's answer cannot be used, and marks a run left running by a dead one", async () => {
    // The snapshots group is held elsewhere: the acquisition of both fails after the bills take opened its run.
    const other = createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "other" });
    try {
      const held = await other.tryAcquire("j3", ["snapshots"]);
      expect(held).toBeDefined();
      expect(await keeper.tryAcquire("j3", ["bills", "snapshots"], rider("j3", BACKFILL))).toBeUndefined();
      expect(await runsOf("j3")).toMatchObject([
        { outcome: "interrupted", error: expect.stringMatching(/before its run began/) },
      ]);
      const { rows } = await pool.query(
        "SELECT holder FROM run_leases WHERE account_name = 'j3' AND stream_group = 'bills'",
      );
      expect(rows).toEqual([{ holder: null }]);
    } finally {
      await other.close();
    }
    // A run the take opened and nobody finished (its process died): the next take marks it, not its own.
    const dead = createLeaseKeeper({ connectionString: t.url }, { ttlMs: 30_000, what: "dead" });
    expect(await dead.tryAcquire("j4", ["bills"], rider("j4", BACKFILL))).toBeDefined();
    await pool.query("UPDATE run_leases SET holder = NULL WHERE account_name = 'j4'");
    await dead.close();
    const next = await keeper.tryAcquire("j4", ["bills"], rider("j4", BACKFILL + 1));
    expect(next!.interruptedRuns).toBe(1);
    expect((await runsOf("j4")).map((r) => r.outcome)).toEqual(["interrupted", "running"]);
    await next!.release();
  });
});
