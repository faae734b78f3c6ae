// One batch of the bills upgrade (copy-bills.ts): the next bills of one account in the old table's
// ledger order (created_at, bill id as a number), copied into bill_rows and the account's progress
// row advanced, in ONE transaction. A kill loses the batch in flight and nothing else; a batch is
// never copied twice (the progress row moves with the rows, and ON CONFLICT DO NOTHING would skip
// any row already there).
import type pg from "pg";

/** A batch committed (what the step's progress and its tests see). */
export interface CopiedBatch {
  account: string;
  /** Bills of the old table the batch covered. */
  bills: number;
  /** Rows it added to bill_rows (equal to `bills` unless some were there already). */
  inserted: number;
}

// The account's cursor, locked: two copies of one account (two migrates) take turns, each from
// where the other stopped.
const CURSOR = `
SELECT after_ms::text AS after_ms, after_id::text AS after_id, done_at IS NOT NULL AS done
FROM bill_rows_upgrade
WHERE account_name = $1
FOR UPDATE`;

// The bills after the cursor ($2 ms, $3 id; the start: year 1 and -1), at most $4, in ledger
// order through the (account_name, created_at) index with an incremental sort on the id: how
// many, their first and last UTC days (the partitions they need), the last one's key, and the
// first bill the new table could not give back as stored: an id with a leading zero (NUMERIC
// drops it) or a created_at that is not created_at_ms (bill_rows keeps one time).
const PROBE = `
WITH s AS (
  SELECT b.bill_id, b.bill_id::numeric AS id, b.created_at, b.created_at_ms
  FROM bills b
  WHERE b.account_name = $1
    AND b.created_at >= timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
    AND (b.created_at > timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
         OR b.bill_id::numeric > $3::numeric)
  ORDER BY b.created_at, b.bill_id::numeric
  LIMIT $4
)
SELECT count(*)::int AS n,
       to_char(min(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS first_day,
       to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS last_day,
       max(created_at_ms)::text AS last_ms,
       (array_agg(id ORDER BY created_at DESC, id DESC))[1]::text AS last_id,
       (array_agg(bill_id ORDER BY created_at, id) FILTER (WHERE bill_id ~ '^0[0-9]'))[1] AS leading_zero,
       (array_agg(bill_id || ' (created_at ' || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                  || ', created_at_ms ' || created_at_ms || ')' ORDER BY created_at, id)
          FILTER (WHERE created_at <> timestamptz 'epoch' + created_at_ms * interval '1 millisecond'))[1] AS two_times
FROM s`;

// The bills of the batch, from after the cursor ($2, $3) to its last key ($5 ms, $6 id), into
// bill_rows: keys of the account ($4), terms and forms (each distinct one looked up or added once
// per batch, not per bill), the raw jsonb split into its form and extra values
// (ledger_sync_split_jsonb: the payload given back is raw::text), last_seen_at kept as revised_at
// when it is not first_seen_at, so the view gives it back. The partitions exist already: a
// partition made in the statement that inserts would not be seen by it.
const INSERT = `
INSERT INTO bill_rows (account_id, coin, symbol, business_type, form_id, created_at, first_seen_at, revised_at,
                       bill_id, amount, balance, fill_fee, source, transfer_reason, extra)
WITH batch AS MATERIALIZED (
  SELECT b.coin, b.symbol, b.business_type, b.created_at, b.first_seen_at, b.last_seen_at, b.bill_id::numeric AS id,
         b.amount, b.balance, b.fill_fee, b.source, b.transfer_reason, s.fmt, s.extra
  FROM bills b
  CROSS JOIN LATERAL ledger_sync_split_jsonb(b.raw, b.bill_id::numeric, b.coin, b.symbol, b.business_type, b.amount,
                                             b.balance, b.fill_fee, b.created_at, b.transfer_reason) s
  WHERE b.account_name = $1
    AND b.created_at >= timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
    AND (b.created_at > timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
         OR b.bill_id::numeric > $3::numeric)
    AND b.created_at <= timestamptz 'epoch' + $5::bigint * interval '1 millisecond'
    AND (b.created_at < timestamptz 'epoch' + $5::bigint * interval '1 millisecond'
         OR b.bill_id::numeric <= $6::numeric)
),
words AS MATERIALIZED (
  SELECT w, ledger_sync_term_key(w) AS key
  FROM (SELECT coin FROM batch UNION SELECT symbol FROM batch UNION SELECT business_type FROM batch) t(w)
  WHERE w IS NOT NULL
),
forms AS MATERIALIZED (
  SELECT fmt, ledger_sync_form_key(fmt) AS key FROM (SELECT DISTINCT fmt FROM batch) f
)
SELECT $4::int, c.key, s.key, t.key, f.key, b.created_at, b.first_seen_at,
       CASE WHEN b.last_seen_at IS DISTINCT FROM b.first_seen_at THEN b.last_seen_at END,
       b.id, b.amount, b.balance, b.fill_fee, b.source, b.transfer_reason, b.extra
FROM batch b
JOIN words c ON c.w = b.coin
LEFT JOIN words s ON s.w = b.symbol
JOIN words t ON t.w = b.business_type
JOIN forms f ON f.fmt = b.fmt
ON CONFLICT DO NOTHING`;

const ADVANCE = `
UPDATE bill_rows_upgrade
SET after_ms = $2::bigint, after_id = $3::numeric, copied = copied + $4::bigint,
    done_at = CASE WHEN $5::boolean THEN now() END
WHERE account_name = $1`;

/** The cursor before any bill: 0001-01-01T00:00:00Z. */
const BEFORE_ALL_MS = "-62135596800000";

const DONE = "UPDATE bill_rows_upgrade SET done_at = now() WHERE account_name = $1";

export interface BatchOptions {
  account: string;
  /** account_keys.id of the account. */
  key: number;
  size: number;
  /** Called in the batch's transaction just before it commits: a throw rolls the batch back. */
  beforeCommit?: (batch: CopiedBatch) => void | Promise<void>;
}

/** SQLSTATE data_exception: ledger_sync_bill_month refuses a month before 2009 or over two years ahead. */
const DATA_EXCEPTION = "22000";

/** SQLSTATE duplicate_table: two copies made the same month's partition at once; the loser tries again. */
const DUPLICATE_TABLE = "42P07";

/** Copies the account's next batch; undefined when the account was done already. */
export async function copyBatch(client: pg.ClientBase, o: BatchOptions): Promise<CopiedBatch | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await copyBatchOnce(client, o);
    } catch (error) {
      if ((error as { code?: string }).code !== DUPLICATE_TABLE || attempt === 3) throw error;
    }
  }
}

async function copyBatchOnce(client: pg.ClientBase, o: BatchOptions): Promise<CopiedBatch | undefined> {
  await client.query("BEGIN");
  try {
    // Plans of a 100,000-row statement calling plpgsql cost enough for JIT, which then spends about
    // a second compiling per batch and saves nothing.
    await client.query("SET LOCAL jit = off");
    const batch = await copyInTransaction(client, o);
    if (batch) await o.beforeCommit?.(batch);
    await client.query("COMMIT");
    return batch;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

async function copyInTransaction(client: pg.ClientBase, o: BatchOptions): Promise<CopiedBatch | undefined> {
  const cursor = (
    await client.query<{ after_ms: string | null; after_id: string | null; done: boolean }>(CURSOR, [o.account])
  ).rows[0];
  if (!cursor || cursor.done) return undefined;
  const from = [cursor.after_ms ?? BEFORE_ALL_MS, cursor.after_id ?? "-1"];
  const probe = (await client.query<Probe>(PROBE, [o.account, ...from, o.size])).rows[0]!;
  refuseUnstorable(o.account, probe);
  if (probe.n === 0) {
    await client.query(DONE, [o.account]);
    return { account: o.account, bills: 0, inserted: 0 };
  }
  await client
    .query("SELECT ledger_sync_bill_months($1::date, $2::date)", [probe.first_day, probe.last_day])
    .catch((error: { code?: string; message?: string }) => {
      if (error.code !== DATA_EXCEPTION) throw error;
      throw new UnstorableBillError(
        `bills upgrade: account "${o.account}" has bills from ${probe.first_day} to ${probe.last_day}: ` +
          `${error.message}; nothing of them was copied`,
        { cause: error },
      );
    });
  const inserted = await client.query(INSERT, [o.account, ...from, o.key, probe.last_ms, probe.last_id]);
  await client.query(ADVANCE, [o.account, probe.last_ms, probe.last_id, probe.n, probe.n < o.size]);
  return { account: o.account, bills: probe.n, inserted: inserted.rowCount ?? 0 };
}

interface Probe {
  n: number;
  first_day: string;
  last_day: string;
  last_ms: string;
  last_id: string;
  leading_zero: string | null;
  two_times: string | null;
}

/** The partitions of every month from the first to the last bill of the accounts not done yet. */
export async function makePartitions(client: pg.ClientBase): Promise<number> {
  const made = await client
    .query<{ made: number | null }>(
      `SELECT ledger_sync_bill_months((min(x.lo) AT TIME ZONE 'UTC')::date,
                                     (max(x.hi) AT TIME ZONE 'UTC')::date) AS made
     FROM bill_rows_upgrade u
     CROSS JOIN LATERAL (SELECT min(b.created_at) AS lo, max(b.created_at) AS hi
                         FROM bills b WHERE b.account_name = u.account_name) x
     WHERE u.done_at IS NULL
     HAVING min(x.lo) IS NOT NULL`,
    )
    .catch((error: { code?: string }) => {
      // A month refused: the batch that reaches it says which account's bills are there.
      if (error.code === DATA_EXCEPTION) return undefined;
      throw error;
    });
  return made?.rows[0]?.made ?? 0;
}

/** A bill bill_rows would not give back as the old table holds it stops the upgrade, named. */
export class UnstorableBillError extends Error {
  override name = "UnstorableBillError";
}

function refuseUnstorable(account: string, probe: Probe): void {
  if (probe.leading_zero !== null)
    throw new UnstorableBillError(
      `bills upgrade: bill ${probe.leading_zero} of account "${account}" has a leading zero, which bill_rows ` +
        "(a NUMERIC id) would not give back; nothing of it was copied. Correct the bill (or remove the account's " +
        "books) and run `ledger-sync migrate` again",
    );
  if (probe.two_times !== null)
    throw new UnstorableBillError(
      `bills upgrade: bill ${probe.two_times} of account "${account}" has two different times, and bill_rows ` +
        "keeps one; nothing of it was copied. Correct the bill and run `ledger-sync migrate` again",
    );
}

/** The same check over every bill at once (before anything is copied): the first one refused, named. */
export async function refuseUnstorableBills(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ account_name: string } & Probe>(
    `SELECT account_name,
            CASE WHEN bill_id ~ '^0[0-9]' THEN bill_id END AS leading_zero,
            CASE WHEN bill_id !~ '^0[0-9]' THEN bill_id || ' (created_at '
              || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
              || ', created_at_ms ' || created_at_ms || ')' END AS two_times
     FROM bills
     WHERE bill_id ~ '^0[0-9]' OR created_at <> timestamptz 'epoch' + created_at_ms * interval '1 millisecond'
     LIMIT 1`,
  );
  const bad = rows[0];
  if (bad) refuseUnstorable(bad.account_name, bad);
}
