// The volume bench item (bench/volume.ts) at CI size: 20,000 bills over 4 accounts, 20 accounts
// registered. No timing is asserted; what is: every measure comes back as a finite positive figure,
// the generated books verify clean (their balances chain per coin in ledger order, so the bench's
// verify figures are of books that pass), the bill ids are unique and increase with time, the
// triggers kept the rollups, a second generation adds nothing, and the bytes-per-bill figure equals
// the relations' sizes summed fork by fork.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cleanup } from "../../bench/cleanup.ts";
import { generateVolume } from "../../bench/volume-generate.ts";
import { STORAGE_TABLES, VIEW_QUERIES } from "../../bench/volume-measure.ts";
import { measureVolume, volumeRows, type VolumeResult } from "../../bench/volume.ts";
import { migrateDeploy } from "../../src/store/migrate/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const SIZE = { bills: 20_000, accounts: 4, registered: 20, order: "arrival" } as const;
let database: TestDatabase;
let c: pg.Client;
let scope: Cleanup;
let r: VolumeResult;

beforeAll(async () => {
  database = await createTestDatabase("ls_test_volume");
  await migrateDeploy(database.url, { log: () => undefined });
  scope = new Cleanup();
  r = await measureVolume(database.url, SIZE, scope);
  c = new pg.Client({ connectionString: database.url });
  await c.connect();
});

afterAll(async () => {
  await c?.end();
  await scope?.run();
  await database?.drop();
});

const one = async <T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T> =>
  (await c.query<T>(sql, params)).rows[0]!;

function positive(label: string, x: number): void {
  expect(Number.isFinite(x) && x > 0, `${label} = ${x}`).toBe(true);
}

describe("volume bench at CI size", () => {
  it("returns every measure as a finite positive figure", () => {
    positive("generation s", r.generated.seconds);
    expect(r.generated).toMatchObject({ accountsWritten: SIZE.accounts, billsWritten: SIZE.bills });
    positive("fleet s", r.fleetSeconds!);
    positive("total bytes", r.storage.totalBytes);
    positive("heap bytes", r.storage.billsHeapBytes);
    expect(r.storage.indexes.length).toBeGreaterThan(0);
    for (const i of r.storage.indexes) positive(i.name, i.bytes);
    const timed = [
      ["statement", r.statement],
      ["verify one", r.verifyAccount],
      ...r.queries.map((q) => [q.label, q] as const),
      ...r.fleet.map((f) => [f.label, f] as const),
    ] as const;
    for (const [label, t] of timed) {
      positive(`${label} cold`, t.coldMs);
      positive(`${label} warm`, t.warmMs);
    }
    expect(r.exports.map((e) => e.format)).toEqual(["jsonl", "ledger-csv"]);
    for (const e of r.exports) {
      expect(e.bills).toBe(SIZE.bills / SIZE.accounts);
      positive(`${e.format} cold`, e.cold.seconds);
      positive(`${e.format} warm`, e.warm.seconds);
    }
    for (const v of [r.verifyAll.cold, r.verifyAll.warm]) {
      positive("verify all s", v.seconds);
      positive("peak rss", v.peakRss);
      expect(v.peakRss).toBeGreaterThanOrEqual(v.rssBefore);
    }
    // The fleet: status lists every registered account; the console's pages answered (else they threw).
    expect(r.fleet.find((f) => f.label.includes("every account"))?.value).toBe(
      `${SIZE.registered} of ${SIZE.registered} accounts`,
    );
    // The table renders every figure.
    const rows = volumeRows(r, "");
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.flat().join("\n")).not.toMatch(/NaN|undefined|Infinity/);
  });

  it("generates books that verify clean, account by account and all together", () => {
    expect(r.verifyAccount.value).toEqual({ bills: SIZE.bills / SIZE.accounts, ok: true, failing: [] });
    for (const v of [r.verifyAll.cold, r.verifyAll.warm])
      expect(v).toMatchObject({ accounts: SIZE.accounts, bills: SIZE.bills, ok: true, failing: [] });
    expect(r.statement.value.chainOk).toBe(true);
    positive("statement bills", r.statement.value.bills);
  });

  it("gives bills unique numeric ids that increase with time, and keeps the rollups by the triggers", async () => {
    const ids = await one<{ n: number; distinct: number; backwards: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT bill_id)::int AS distinct,
              (SELECT count(*)::int FROM (SELECT created_at_ms < lag(created_at_ms) OVER (ORDER BY bill_id::numeric) AS back
                                          FROM bills) x WHERE back) AS backwards
       FROM bills`,
    );
    expect(ids).toEqual({ n: SIZE.bills, distinct: SIZE.bills, backwards: 0 });
    // Several bills share a millisecond within an account: ledger order's tie on the id is exercised.
    const ties = await one<{ n: number }>(
      "SELECT count(*)::int AS n FROM (SELECT 1 FROM bills GROUP BY account_name, coin, created_at_ms HAVING count(*) > 1) t",
    );
    expect(ties.n).toBeGreaterThan(0);
    // daily_rollups equals bills grouped (docs/schema.md): the insert triggers ran.
    const differ = await one<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         (SELECT account_name, day, coin, symbol, business_type, bills, amount, fill_fee FROM daily_rollups
          EXCEPT SELECT account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type,
                        count(*), sum(amount), sum(fill_fee) FROM bills GROUP BY 1, 2, 3, 4, 5)
         UNION ALL
         (SELECT account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type,
                 count(*), sum(amount), sum(fill_fee) FROM bills GROUP BY 1, 2, 3, 4, 5
          EXCEPT SELECT account_name, day, coin, symbol, business_type, bills, amount, fill_fee FROM daily_rollups)
       ) d`,
    );
    expect(differ.n).toBe(0);
  });

  it("writes in arrival order, then compacts every past month as `storage compact` does", async () => {
    // Written interleaved by time, the months took more room than once rewritten in ledger order.
    expect(r.compaction).toMatchObject({ months: 12 });
    expect(r.compaction!.before.bills).toBe(SIZE.bills);
    expect(r.compaction!.before.totalBytes).toBeGreaterThan(r.storage.totalBytes);
    // Compacted: one run of consecutive heap rows per account.
    const runs = await one<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT account_id IS DISTINCT FROM lag(account_id) OVER (ORDER BY ctid) AS starts FROM bill_rows_2025_03) x
       WHERE starts`,
    );
    expect(runs.n).toBe(SIZE.accounts);
    expect((await one<{ stage: string | null }>("SELECT to_regclass('volume_stage')::text AS stage")).stage).toBeNull();
  });

  it("generates nothing again for accounts already there", async () => {
    const again = await generateVolume(c, SIZE);
    expect(again).toMatchObject({ accountsWritten: 0, billsWritten: 0 });
    expect((await one<{ n: number }>("SELECT count(*)::int AS n FROM bills")).n).toBe(SIZE.bills);
  });

  it("measures bytes per bill as the relations' sizes summed fork by fork", async () => {
    // Every relation of the tables: each table and its partitions (if any), their TOAST tables,
    // the indexes of all of these; every fork of each.
    const { bytes } = await one<{ bytes: string }>(
      `WITH RECURSIVE t(oid) AS (
         SELECT x::regclass::oid FROM unnest($1::text[]) x
         UNION ALL SELECT i.inhrelid FROM pg_inherits i JOIN t ON i.inhparent = t.oid
       ),
       rel(oid) AS (SELECT oid FROM t UNION ALL SELECT reltoastrelid FROM pg_class WHERE oid IN (SELECT oid FROM t) AND reltoastrelid <> 0),
       every(oid) AS (SELECT oid FROM rel UNION ALL SELECT indexrelid FROM pg_index WHERE indrelid IN (SELECT oid FROM rel))
       SELECT sum(pg_relation_size(oid, fork))::text AS bytes
       FROM every CROSS JOIN unnest(ARRAY['main', 'fsm', 'vm', 'init']) AS fork`,
      [STORAGE_TABLES],
    );
    expect(r.storage.totalBytes).toBe(Number(bytes));
    expect(r.storage.bills).toBe(SIZE.bills);
    // The indexes listed are every index of bill_rows, and they are part of the total.
    const indexes = await one<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_index WHERE indrelid = 'bill_rows'::regclass",
    );
    expect(r.storage.indexes.length).toBe(indexes.n);
    const sizes = r.storage.indexes.map((i) => i.bytes);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
  });

  it("times every BI view of the database", async () => {
    const views = (
      await c.query<{ v: string }>(
        "SELECT viewname AS v FROM pg_views WHERE schemaname = current_schema() AND viewname LIKE 'v\\_%' ORDER BY 1",
      )
    ).rows.map((x) => x.v);
    expect(VIEW_QUERIES.map((q) => q.view).sort()).toEqual(views);
  });
});
