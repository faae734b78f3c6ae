// `ledger-sync storage compact` (src/store/month-compaction.ts): a past month written as a fleet
// writes it (every account's bills interleaved by time) has each account's rows spread over the heap
// and a primary key about half full; rewritten, each account's rows are together and the key is
// packed, the rows are the very same, the month is recorded and not rewritten again, a month not yet
// past is left alone, a month held by a long query is given up after the lock wait, unchanged, and
// the month is frozen and all-visible after, the rollups' indexes are rebuilt with the months (an invalid leftover of a cut-short rebuild first
// dropped).
// Real PostgreSQL, the real command line.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadBillsIn } from "../../src/store/bills-load.ts";
import { compactMonth, dueMonths, partitionMonths } from "../../src/store/month-compaction.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
let c: pg.Client;
const MARCH = { month: "2025-03", partition: "bill_rows_2025_03" };

beforeAll(async () => {
  t = await createMigratedDb();
  c = new pg.Client({ connectionString: t.url });
  await c.connect();
  // 20 accounts × 2,000 bills of March 2025, loaded in time order: each account's keys arrive one at
  // a time between the other accounts', as a fleet's syncs write them.
  await c.query("BEGIN");
  await loadBillsIn(
    c,
    `SELECT 'desk-' || a AS account_name, (1000000000000 + i * 100 + a)::text AS bill_id, 'USDT' AS coin,
            'BTCUSDT' AS symbol, 'open_long' AS business_type, '1.5' AS amount, (1.5 * i)::text AS balance,
            '0' AS fill_fee, ${Date.UTC(2025, 2, 1)} + i * 60000 AS created_at_ms, '{}'::jsonb AS raw
     FROM generate_series(1, 20) a, generate_series(1, 2000) i`,
    [],
    "time",
  );
  await c.query("COMMIT");
});
afterAll(async () => {
  await c.end();
  await t.close();
});

const rowsDigest = async () =>
  (
    await c.query<{ d: string; n: number }>(
      `SELECT md5(string_agg(b::text, E'\\n' ORDER BY account_id, created_at, bill_id)) AS d, count(*)::int AS n
       FROM bill_rows_2025_03 b`,
    )
  ).rows[0]!;
/** Runs of consecutive heap rows of one account. */
const accountRuns = async () =>
  (
    await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT account_id IS DISTINCT FROM lag(account_id) OVER (ORDER BY ctid) AS starts FROM bill_rows_2025_03) x
       WHERE starts`,
    )
  ).rows[0]!.n;
const pkeyBytes = async () =>
  Number((await c.query<{ b: string }>("SELECT pg_relation_size('bill_rows_2025_03_pkey')::text AS b")).rows[0]!.b);

describe("storage compact", () => {
  it("lists past months only, oldest first", async () => {
    const all = await partitionMonths(c);
    expect(all.map((p) => p.month)).toContain(MARCH.month);
    // `migrate` made the current month and the coming ones ahead: none of them is due.
    expect(all.length).toBeGreaterThan(2);
    expect(await dueMonths(c, Date.now())).toEqual([MARCH]);
    // A month is past once its end is a day (or the lookback given) behind.
    expect(await dueMonths(c, Date.UTC(2025, 3, 1) + 3_600_000)).toEqual([]);
  });

  it("rewrites the month in ledger order with packed indexes, keeps every row, and records the month", async () => {
    const before = await rowsDigest();
    expect(before.n).toBe(40_000);
    // Interleaved by time, consecutive heap rows belong to different accounts.
    expect(await accountRuns()).toBeGreaterThan(30_000);
    const loose = await pkeyBytes();
    const frozenAge = async () =>
      (
        await c.query<{ age: number }>(
          "SELECT age(relfrozenxid) AS age FROM pg_class WHERE relname = 'bill_rows_2025_03'",
        )
      ).rows[0]!.age;
    // Transaction ids used since the month was written: its rows are that much older.
    for (let i = 0; i < 30; i++) await c.query("SELECT txid_current()");
    const ageBefore = await frozenAge();
    expect(ageBefore).toBeGreaterThanOrEqual(30);
    const said: string[] = [];
    const done = await compactMonth(c, MARCH, (line) => said.push(line));
    expect(said[0]).toContain("2025-03: rewriting bill_rows_2025_03 in ledger order");
    // One run of consecutive rows per account, and the key packed: about half what the writes left.
    expect(await accountRuns()).toBe(20);
    const packed = await pkeyBytes();
    expect(packed / loose).toBeLessThan(0.75);
    expect(done.indexBytes[1]).toBeLessThan(done.indexBytes[0]);
    expect(await rowsDigest()).toEqual(before);
    // Frozen (its oldest unfrozen id moved up to the vacuum's horizon), every page all-visible
    // (index-only reads skip the heap).
    const [vacuumed] = (
      await c.query<{ pages: number; visible: number }>(
        "SELECT relpages AS pages, relallvisible AS visible FROM pg_class WHERE relname = 'bill_rows_2025_03'",
      )
    ).rows;
    expect(vacuumed!.pages).toBeGreaterThan(0);
    expect(vacuumed!.visible).toBe(vacuumed!.pages);
    expect(await frozenAge()).toBeLessThan(ageBefore);
    const [recorded] = (
      await c.query<{ partition_name: string; smaller: boolean }>(
        "SELECT partition_name, bytes_after < bytes_before AS smaller FROM compacted_months WHERE month = '2025-03-01'",
      )
    ).rows;
    expect(recorded).toEqual({ partition_name: MARCH.partition, smaller: true });
    expect(await dueMonths(c, Date.now())).toEqual([]);
  });

  it("gives up after its lock wait while the month is in use, changing nothing", async () => {
    const other = new pg.Client({ connectionString: t.url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT count(*) FROM bill_rows_2025_03");
      const before = (await c.query<{ at: Date }>("SELECT compacted_at AS at FROM compacted_months")).rows;
      await expect(compactMonth(c, MARCH, undefined, "300ms")).rejects.toThrow(
        /2025-03: bill_rows_2025_03 stayed in use for 300ms .*nothing was changed/,
      );
      expect((await c.query<{ at: Date }>("SELECT compacted_at AS at FROM compacted_months")).rows).toEqual(before);
    } finally {
      await other.query("ROLLBACK");
      await other.end();
    }
  });

  it("the command: nothing due says so; --month rebuilds again; a month with no partition or a bad one is refused", async () => {
    const env = { DATABASE_URL: t.url };
    const idle = await runCli(["storage", "compact"], env);
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.stdout).toBe("no past month is waiting to be compacted\n");
    // A rebuild of the rollups' key cut short left its invalid copy: the next run drops it first.
    await c.query("CREATE INDEX rollup_rows_key_ccnew ON rollup_rows (account_id, day)");
    await c.query("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'rollup_rows_key_ccnew'::regclass");
    const again = await runCli(["storage", "compact", "--month", "2025-03", "--json"], env);
    expect(again.code, again.stderr).toBe(0);
    const out = JSON.parse(again.stdout) as {
      compacted: { month: string; indexBytes: number[] }[];
      rollups: { indexes: string[]; leftoversDropped: string[] };
    };
    expect(out.compacted.map((m) => m.month)).toEqual(["2025-03"]);
    expect(out.compacted[0]!.indexBytes).toHaveLength(2);
    expect(out.rollups.indexes).toContain("rollup_rows_key");
    expect(out.rollups.leftoversDropped).toEqual(["rollup_rows_key_ccnew"]);
    const { rows } = await c.query("SELECT 1 FROM pg_class WHERE relname = 'rollup_rows_key_ccnew'");
    expect(rows).toEqual([]);
    const text = await runCli(["storage", "compact", "--month", "2025-03"], env);
    expect(text.stdout).toMatch(/^2025-03: bill_rows_2025_03 rewritten in ledger order in [0-9.]+ s: table /);
    expect(text.stdout).toMatch(/\nrollups: rollup_rows_key rebuilt in [0-9.]+ s: /);
    const none = await runCli(["storage", "compact", "--month", "2031-01"], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--month 2031-01: bill_rows has no partition for that month");
    const bad = await runCli(["storage", "compact", "--month", "March"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--month "March": must be a calendar month as YYYY-MM (UTC)');
  });
});
