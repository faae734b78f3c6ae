// Migration partition_index_fill: every B-tree index of every partition of bill_rows packs its pages
// full (fillfactor 100), whoever made the partition (the partition maker, or `archive attach`, whose
// test checks its own), and an account's bills written in ledger order leave the primary key's pages
// full instead of a tenth empty. The helper refuses a table that is not a partition of bill_rows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertBills } from "../support/insert-bills.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

interface IndexRow {
  partition: string;
  index: string;
  method: string;
  options: string[] | null;
}

const partitionIndexes = () =>
  t.db.$queryRawUnsafe<IndexRow[]>(
    `SELECT p.relid::regclass::text AS partition, c.relname AS index, am.amname AS method, c.reloptions AS options
     FROM pg_partition_tree('bill_rows') p
     JOIN pg_index i ON i.indrelid = p.relid JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
     WHERE p.level > 0 ORDER BY 1, 2`,
  );

/** Two accounts' bills of March 2025, each account's in ledger order, one INSERT ... SELECT. */
const load = (bills: number) =>
  insertBills(
    t.db,
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at_ms, raw)
     SELECT 'fill-' || a, (1000000000000 + i)::text, 'USDT', 'BTCUSDT', 'open_long', '1.5', (1.5 * i)::text, '0',
            ${Date.UTC(2025, 2, 1)} + i * 1000, '{}'::jsonb
     FROM generate_series(1, 2) a, generate_series(1, $1::int) i`,
    bills,
  );

describe("bill_rows' partition indexes", () => {
  it("a month the partition maker makes has fillfactor 100 on its B-tree indexes, not on the BRIN", async () => {
    await t.db.$queryRawUnsafe("SELECT ledger_sync_bill_month('2025-03-01'::date)");
    const made = (await partitionIndexes()).filter((r) => r.partition === "bill_rows_2025_03");
    expect(made.filter((r) => r.method === "btree").length).toBeGreaterThanOrEqual(2);
    for (const r of made) {
      if (r.method === "btree") expect(r.options, r.index).toContain("fillfactor=100");
      else expect(r.options ?? [], r.index).not.toContain("fillfactor=100");
    }
  });

  it("bills written in ledger order leave the primary key's pages full, against the default's tenth free", async () => {
    await load(40_000);
    // The same rows, in the same order, under the same key with PostgreSQL's default fill.
    await t.db.$executeRawUnsafe("CREATE TABLE default_fill AS SELECT * FROM bill_rows_2025_03 WITH NO DATA");
    await t.db.$executeRawUnsafe("CREATE INDEX default_fill_key ON default_fill (account_id, created_at, bill_id)");
    await t.db.$executeRawUnsafe(
      "INSERT INTO default_fill SELECT * FROM bill_rows_2025_03 ORDER BY account_id, created_at, bill_id",
    );
    const [sizes] = await t.db.$queryRawUnsafe<{ packed: bigint; default_fill: bigint }[]>(
      "SELECT pg_relation_size('bill_rows_2025_03_pkey') AS packed, pg_relation_size('default_fill_key') AS default_fill",
    );
    const ratio = Number(sizes!.packed) / Number(sizes!.default_fill);
    // 90% fill against 100%: the packed index is about a tenth smaller.
    expect(ratio).toBeLessThan(0.94);
    expect(ratio).toBeGreaterThan(0.85);
  });

  it("every partition the migration found, or a later month made, has it; a non-partition is refused", async () => {
    await t.db.$queryRawUnsafe("SELECT ledger_sync_bill_month('2025-04-01'::date)");
    const btrees = (await partitionIndexes()).filter((r) => r.method === "btree");
    expect(new Set(btrees.map((r) => r.partition))).toContain("bill_rows_2025_04");
    for (const r of btrees) expect(r.options, `${r.partition} ${r.index}`).toContain("fillfactor=100");
    await expect(t.db.$queryRawUnsafe("SELECT ledger_sync_pack_indexes('account_keys'::regclass)")).rejects.toThrow(
      /account_keys is not a partition of bill_rows/,
    );
  });
});
