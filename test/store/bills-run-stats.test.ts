// bills_run_stats: each account's last ten finished bills runs (pages, start times, the newest's
// outcome), kept by triggers on sync_runs, equal at every point to what reading sync_runs gives: after
// the migration over runs finished before it (the upgrade), and after runs finished through
// finishRun in any order, marked interrupted later, or inserted finished; other streams and runs
// still running count for nothing. The fleet view reads it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFleet } from "../../src/store/accounts/overview.ts";
import { migrateDeploy } from "../../src/store/migrate/index.ts";
import { createDb, type Db } from "../../src/store/prisma.ts";
import { finishRun, startRun, type RunOutcome } from "../../src/store/sync-runs.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { migrateBefore } from "../support/migrate-before.ts";

const MIGRATION = "20261201000000_bills_run_stats";
const OUTCOMES: RunOutcome[] = ["ok", "unverified", "failed", "interrupted"];

let t: TestDatabase;
let db: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  await migrateBefore(t.url, MIGRATION);
  db = createDb(t.url);
});
afterAll(async () => {
  await db.$disconnect();
  await t.drop();
});

interface Stats {
  account: string;
  pages: number[];
  started: string[];
  last: string;
}

/** What the fleet view read from sync_runs before the table: each account's last ten finished bills runs. */
const fromRuns = () =>
  db.$queryRawUnsafe<Stats[]>(
    `SELECT a.account_name AS account, l.pages, l.started, l.last
     FROM (SELECT DISTINCT account_name FROM sync_runs) a
     CROSS JOIN LATERAL (
       SELECT array_agg(x.pages ORDER BY x.started_at) AS pages,
              array_agg(to_char(x.started_at, 'YYYY-MM-DD HH24:MI:SS.MS') ORDER BY x.started_at) AS started,
              (array_agg(x.outcome ORDER BY x.started_at DESC))[1] AS last
       FROM (SELECT pages, started_at, outcome FROM sync_runs
             WHERE account_name = a.account_name AND stream = 'bills' AND finished_at IS NOT NULL
             ORDER BY started_at DESC LIMIT 10) x) l
     WHERE l.pages IS NOT NULL ORDER BY 1`,
  );
const fromTable = () =>
  db.$queryRawUnsafe<Stats[]>(
    `SELECT account_name AS account, pages,
            ARRAY(SELECT to_char(s, 'YYYY-MM-DD HH24:MI:SS.MS') FROM unnest(started) s) AS started, last_outcome AS last
     FROM bills_run_stats ORDER BY 1`,
  );

/** A deterministic shuffle (a linear congruential generator), so a failure can be replayed. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Runs of `accounts`, started at distinct times in a shuffled order, still running; their ids. */
async function openRuns(prefix: string, accounts: number, perAccount: number, seed: number): Promise<bigint[]> {
  const ids: bigint[] = [];
  const slots = shuffled(
    Array.from({ length: accounts * perAccount }, (_, i) => i),
    seed,
  );
  for (const [k, slot] of slots.entries()) {
    const stream = k % 7 === 3 ? "snapshots" : "bills";
    const id = await startRun(db, { accountName: `${prefix}-${slot % accounts}`, stream });
    await db.$executeRawUnsafe(
      `UPDATE sync_runs SET started_at = timestamptz '2026-11-01' + $1::int * interval '1 second' WHERE id = $2::bigint`,
      slot,
      String(id),
    );
    ids.push(id);
  }
  return ids;
}

async function finishSome(ids: bigint[], seed: number, share: number): Promise<void> {
  for (const [k, id] of shuffled(ids, seed).entries()) {
    if (k >= Math.floor(ids.length * share)) return;
    const [run] = await db.$queryRawUnsafe<{ account: string }[]>(
      `SELECT account_name AS account FROM sync_runs WHERE id = $1::bigint`,
      String(id),
    );
    await finishRun(db, run!.account, id, { outcome: OUTCOMES[(k * 7 + seed) % 4]!, pages: (k * 13 + seed) % 40 });
  }
}

describe("bills_run_stats", () => {
  it("the upgrade fills it from the runs finished before it, and leaves the running ones", async () => {
    const ids = await openRuns("before", 4, 16, 7);
    await finishSome(ids, 11, 0.8);
    await db.$executeRawUnsafe(
      `INSERT INTO sync_runs (account_name, stream, started_at, finished_at, outcome, pages)
       VALUES ('before-only-snapshots', 'snapshots', now(), now(), 'ok', 3)`,
    );
    const expected = await fromRuns();
    expect(expected.length).toBe(4);
    expect(expected.some((s) => s.pages.length === 10)).toBe(true);
    await migrateDeploy(t.url, { log: () => undefined });
    expect(await fromTable()).toEqual(expected);
  });

  it("runs finished in any order, the rest of those running finished later, keep it equal to the runs", async () => {
    const ids = await openRuns("after", 5, 30, 3);
    await finishSome(ids, 5, 0.5);
    expect(await fromTable()).toEqual(await fromRuns());
    // The others finished later, out of their start order: as a dead process's runs are marked.
    await db.$executeRawUnsafe(
      `UPDATE sync_runs SET outcome = 'interrupted', finished_at = now() WHERE outcome = 'running'`,
    );
    expect(await fromTable()).toEqual(await fromRuns());
    const newest = await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM bills_run_stats WHERE account_name LIKE 'after-%' AND cardinality(pages) = 10`,
    );
    expect(newest[0]!.n).toBe(5);
  });

  it("a run inserted finished counts; a run of another stream or still running does not", async () => {
    await db.$executeRawUnsafe(
      `INSERT INTO sync_runs (account_name, stream, started_at, finished_at, outcome, pages) VALUES
         ('inserted', 'bills', timestamptz '2026-11-20', timestamptz '2026-11-20', 'failed', 4),
         ('inserted', 'snapshots', timestamptz '2026-11-21', timestamptz '2026-11-21', 'ok', 9),
         ('inserted', 'bills', timestamptz '2026-11-22', NULL, 'running', 0)`,
    );
    const row = (await fromTable()).find((s) => s.account === "inserted");
    expect(row).toEqual({ account: "inserted", pages: [4], started: ["2026-11-20 00:00:00.000"], last: "failed" });
    expect(await fromTable()).toEqual(await fromRuns());
  });

  it("many runs inserted finished in one statement are merged once per account, beside the runs already counted", async () => {
    const before = await db.$queryRawUnsafe<{ bytes: number }[]>(
      `SELECT pg_relation_size('bills_run_stats')::int AS bytes`,
    );
    // 40 accounts × 100 runs, among them accounts with runs counted already (after-0 .. after-4),
    // start times interleaved with theirs, and a newest run that failed for every third account.
    await db.$executeRawUnsafe(
      `INSERT INTO sync_runs (account_name, stream, started_at, finished_at, outcome, pages)
       SELECT CASE WHEN a < 5 THEN 'after-' || a ELSE 'bulk-' || a END, 'bills',
              timestamptz '2026-11-01' + (g * 2 + a % 2) * interval '1 second', now(),
              CASE WHEN g = 100 AND a % 3 = 0 THEN 'failed' ELSE 'ok' END, (a * g) % 17
       FROM generate_series(0, 39) a, generate_series(1, 100) g`,
    );
    expect(await fromTable()).toEqual(await fromRuns());
    // One new version per account, not one per run: the table grew by a few pages at most.
    const after = await db.$queryRawUnsafe<{ bytes: number }[]>(
      `SELECT pg_relation_size('bills_run_stats')::int AS bytes`,
    );
    expect(after[0]!.bytes - before[0]!.bytes).toBeLessThan(64 * 1024);
  });

  it("the fleet view reads its figures from it", async () => {
    // Accounts the fleet knows (by their bills cursor).
    await db.$executeRawUnsafe(
      `INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at)
       VALUES ('inserted', 'bills', 0, now()), ('after-1', 'bills', 0, now())`,
    );
    const page = await readFleet(db, { limit: null, offset: 0, names: ["inserted", "after-1"] });
    const byName = new Map(page.accounts.map((a) => [a.name, a]));
    const stats = new Map((await fromRuns()).map((s) => [s.account, s]));
    for (const name of ["inserted", "after-1"]) {
      const s = stats.get(name)!;
      expect(byName.get(name)!.runsAveraged).toBe(s.pages.length);
      expect(byName.get(name)!.requestsPerRun).toBeCloseTo(s.pages.reduce((a, b) => a + b, 0) / s.pages.length, 10);
    }
    expect(byName.get("inserted")!.reasons).toContain("last bills run failed");
  });
});
