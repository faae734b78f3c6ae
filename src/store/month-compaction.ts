// Compaction of a past month's partition (docs/design/bill-storage.md, "A month as a fleet writes
// it"): its rows rewritten in ledger order and its indexes rebuilt packed, by CLUSTER on the primary
// key. A fleet's syncs write each account's bills a few at a time, interleaved with every other
// account's: an account's month ends up spread over the whole partition's heap (a statement or an
// export reads a page per bill), and each key lands inside the indexes rather than at their end, so
// the primary key's pages split in half. Rewritten, an account's month is a few consecutive pages
// and the indexes are packed (the partitions' fillfactor is 100, migration partition_index_fill);
// a past month takes almost no writes, so it stays that way. It is then frozen and its pages marked
// all-visible (VACUUM FREEZE): never vacuumed against wraparound again, and read index-only.
//
// CLUSTER holds the month's partition ACCESS EXCLUSIVE for the rewrite: that month's reads and
// writes wait for it (queries of other months do not, when their time range prunes it). It is one
// statement, so a rewrite cut short leaves the month as it was. Only the tables' owner may run it:
// `ledger-sync storage compact` runs as the role that runs `migrate`. The lock is waited for at most
// LOCK_WAIT, so a long report holding the month does not make every query queue behind the wait.
// Each month done is recorded in compacted_months, so a monthly run rewrites only the months that
// ended since.
//
// The rollups (rollup_rows, one table for every month) loosen the same way: each day's keys land
// after every account's last one. Their B-tree indexes are rebuilt with REINDEX CONCURRENTLY, which
// lets the triggers that keep them go on writing; a rebuild cut short leaves an invalid copy named
// `..._ccnew`, dropped by the next run before it rebuilds.
import type pg from "pg";

export interface PartitionMonth {
  /** "2025-01". */
  month: string;
  /** "bill_rows_2025_01". */
  partition: string;
}

export interface CompactedMonth extends PartitionMonth {
  /** The heap's bytes (with TOAST) before and after. */
  tableBytes: [number, number];
  /** The indexes' bytes before and after. */
  indexBytes: [number, number];
  seconds: number;
}

/** A month is past once its end is further back than this: late bills (the lookback) have come in. */
export const SETTLE_MS = 86_400_000;

const PARTITION_NAME = /^bill_rows_(\d{4})_(\d{2})$/;

/** The partitions of bill_rows, oldest first, each with its month. */
export async function partitionMonths(client: pg.ClientBase): Promise<PartitionMonth[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_partition_tree('bill_rows') p JOIN pg_class c ON c.oid = p.relid
     WHERE p.level > 0 ORDER BY 1`,
  );
  return rows.flatMap((r) => {
    const m = PARTITION_NAME.exec(r.name);
    return m ? [{ month: `${m[1]}-${m[2]}`, partition: r.name }] : [];
  });
}

/**
 * The months to compact: every partition whose month ended more than `settleMs` before `nowMs` and
 * that compacted_months does not list.
 */
export async function dueMonths(client: pg.ClientBase, nowMs: number, settleMs = SETTLE_MS): Promise<PartitionMonth[]> {
  const done = new Set(
    (await client.query<{ month: string }>("SELECT to_char(month, 'YYYY-MM') AS month FROM compacted_months")).rows.map(
      (r) => r.month,
    ),
  );
  return (await partitionMonths(client)).filter((p) => {
    const [y, m] = p.month.split("-").map(Number) as [number, number];
    return Date.UTC(y, m, 1) + settleMs <= nowMs && !done.has(p.month);
  });
}

/** Waited for the month's lock before giving up (the rewrite itself is not limited). */
const LOCK_WAIT = "10s";

/** The partition's bytes: heap (with TOAST) and indexes. */
async function sizes(client: pg.ClientBase, partition: string): Promise<{ table: number; indexes: number }> {
  const { rows } = await client.query<{ table: string; indexes: string }>(
    "SELECT pg_table_size($1::regclass)::text AS table, pg_indexes_size($1::regclass)::text AS indexes",
    [partition],
  );
  return { table: Number(rows[0]!.table), indexes: Number(rows[0]!.indexes) };
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Rewrites the month in ledger order (CLUSTER on its primary key) and records it. The client must not
 * be inside a transaction: the lock wait is set for this statement's transaction only.
 */
export async function compactMonth(
  client: pg.ClientBase,
  p: PartitionMonth,
  say: (line: string) => void = () => undefined,
  lockWait: string = LOCK_WAIT,
): Promise<CompactedMonth> {
  if (!/^[0-9]+(ms|s)$/.test(lockWait))
    throw new Error(`lock wait ${JSON.stringify(lockWait)}: must be like 10s or 500ms`);
  const started = performance.now();
  const before = await sizes(client, p.partition);
  // Indexes made before migration partition_index_fill are given fillfactor 100 first, so the
  // rebuild packs them.
  await client.query("SELECT ledger_sync_pack_indexes($1::regclass)", [p.partition]);
  say(`${p.month}: rewriting ${p.partition} in ledger order (${before.table + before.indexes} bytes)`);
  await client.query("BEGIN");
  try {
    await client.query(`SET LOCAL lock_timeout = '${lockWait}'`);
    await client.query(`CLUSTER ${quoted(p.partition)} USING ${quoted(`${p.partition}_pkey`)}`);
    await client.query(
      `INSERT INTO compacted_months (month, partition_name, bytes_before, bytes_after, compacted_at)
       VALUES ($1::date, $2::text, $3, pg_total_relation_size($2::text::regclass), now())
       ON CONFLICT (month) DO UPDATE SET partition_name = EXCLUDED.partition_name,
         bytes_before = EXCLUDED.bytes_before, bytes_after = EXCLUDED.bytes_after,
         compacted_at = EXCLUDED.compacted_at`,
      [`${p.month}-01`, p.partition, before.table + before.indexes],
    );
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    if ((err as { code?: string }).code === "55P03")
      throw new Error(
        `${p.month}: ${p.partition} stayed in use for ${lockWait} (a long query or a sync writing the month); ` +
          "nothing was changed: run `ledger-sync storage compact` again when it is quiet",
        { cause: err },
      );
    throw err;
  }
  // Frozen once, now that it takes almost no writes (no anti-wraparound vacuum of it later), its
  // pages marked all-visible (index-only reads of its keys, as verify's chain makes, skip the heap),
  // and its statistics taken again, since the rows moved.
  await client.query(`VACUUM (FREEZE, ANALYZE) ${quoted(p.partition)}`);
  const after = await sizes(client, p.partition);
  return {
    ...p,
    tableBytes: [before.table, after.table],
    indexBytes: [before.indexes, after.indexes],
    seconds: (performance.now() - started) / 1000,
  };
}

export interface CompactedRollups {
  indexes: string[];
  bytesBefore: number;
  bytesAfter: number;
  /** Invalid copies a rebuild cut short had left, dropped first. */
  leftoversDropped: string[];
  seconds: number;
}

/** rollup_rows' B-tree indexes, valid ones and leftovers of a rebuild cut short apart, with their size. */
async function rollupIndexes(client: pg.ClientBase) {
  const { rows } = await client.query<{ name: string; valid: boolean; bytes: string }>(
    `SELECT c.relname AS name, i.indisvalid AS valid, pg_relation_size(c.oid)::text AS bytes
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
     WHERE i.indrelid = 'rollup_rows'::regclass AND am.amname = 'btree' ORDER BY 1`,
  );
  const leftover = (r: { name: string; valid: boolean }) => !r.valid && /_ccnew\d*$/.test(r.name);
  return { valid: rows.filter((r) => !leftover(r)), leftovers: rows.filter(leftover).map((r) => r.name) };
}

const bytesOf = (rows: { bytes: string }[]) => rows.reduce((n, r) => n + Number(r.bytes), 0);

/** Rebuilds rollup_rows' B-tree indexes, online. The client must not be inside a transaction. */
export async function compactRollups(
  client: pg.ClientBase,
  say: (line: string) => void = () => undefined,
): Promise<CompactedRollups> {
  const started = performance.now();
  const before = await rollupIndexes(client);
  for (const name of before.leftovers) {
    say(`rollups: dropping ${name}, left by a rebuild that was cut short`);
    await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${quoted(name)}`);
  }
  for (const index of before.valid) {
    say(`rollups: rebuilding ${index.name}`);
    await client.query(`REINDEX INDEX CONCURRENTLY ${quoted(index.name)}`);
  }
  const after = await rollupIndexes(client);
  return {
    indexes: before.valid.map((i) => i.name),
    bytesBefore: bytesOf(before.valid),
    bytesAfter: bytesOf(after.valid),
    leftoversDropped: before.leftovers,
    seconds: (performance.now() - started) / 1000,
  };
}
