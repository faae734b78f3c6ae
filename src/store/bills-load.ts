// Loads bills given as rows of the `bills` view, set-based: a restore, an import, a benchmark's
// synthetic books. A write through the view itself is carried row by row (an INSTEAD OF trigger:
// a few statements per bill), fine for a correction, far too slow for a million bills; this runs
// a fixed number of statements whatever the count. The rows get their keys as the window write
// gives them (one lookup per distinct account and term), and their raw split into a form and extra
// values where exact, kept whole otherwise (ledger_sync_split_jsonb). Every trigger of bill_rows
// fires as for any write: the guard, the rollups, the id ranges.
import type pg from "pg";
import type { Db } from "./prisma.ts";

/**
 * Inserts the rows of `select` (columns account_name, bill_id, coin, symbol, business_type, amount,
 * balance, fill_fee, created_at_ms, raw; optionally transfer_reason, source, first_seen_at, or,
 * instead of raw, the payload's form `fmt` (format() text, bill_forms) and `extra` (text[]): a
 * generator that knows the shape of what it writes) into bill_rows in one transaction. Returns how
 * many were inserted; a bill already stored (same account, time and id) is left as it is.
 */
export async function loadBills(db: Db, select: string, ...params: unknown[]): Promise<number> {
  return db.$transaction(
    async (tx) => {
      await tx.$executeRawUnsafe(stageSql(select), ...params);
      await tx.$queryRawUnsafe(MONTHS);
      return tx.$executeRawUnsafe(LOAD);
    },
    { timeout: 3_600_000 },
  );
}

/**
 * The order rows go into the table: `ledger` (the default), each account's bills together in ledger
 * order, so the heap holds an account's month in a few pages and every index is appended at its end;
 * `time`, every account's bills interleaved by time, as a fleet's syncs write them (the volume
 * bench's arrival order).
 */
export type LoadOrder = "ledger" | "time";

/** The same inside the caller's transaction on a pg client (BEGIN before, COMMIT after). */
export async function loadBillsIn(
  client: pg.ClientBase,
  select: string,
  params: unknown[],
  order: LoadOrder = "ledger",
): Promise<number> {
  await client.query(stageSql(select), params);
  await client.query(MONTHS);
  return (await client.query(order === "ledger" ? LOAD : LOAD.replace(LEDGER_ORDER, TIME_ORDER))).rowCount ?? 0;
}

// The rows, once (a SELECT of random() or a sequence must not run twice), dropped at commit.
const stageSql = (select: string) => `CREATE TEMP TABLE ledger_sync_load ON COMMIT DROP AS ${select}`;

// Every month the rows fall in has its partition before the INSERT (made during it, it would not be one
// the INSERT can route to).
const MONTHS = `SELECT ledger_sync_bill_months(min(at)::date, max(at)::date) FROM (
  SELECT timestamptz 'epoch' + created_at_ms::bigint * interval '1 millisecond' AS at FROM ledger_sync_load) s
WHERE at IS NOT NULL`;

const LEDGER_ORDER = "ORDER BY a.id, s.at, s.id";
const TIME_ORDER = "ORDER BY s.at, a.id, s.id";

const LOAD = `
WITH src AS (
  SELECT s.account_name, ledger_sync_bill_id(s.bill_id::text) AS id, s.coin, s.symbol, s.business_type,
         s.amount::numeric AS amount, s.balance::numeric AS balance, s.fill_fee::numeric AS fill_fee,
         timestamptz 'epoch' + s.created_at_ms::bigint * interval '1 millisecond' AS at,
         coalesce(s.raw::jsonb, '{}'::jsonb) AS raw, to_jsonb(s) AS r
  FROM ledger_sync_load s
),
accounts AS (
  SELECT a.name, ledger_sync_account_key(a.name) AS id FROM (SELECT DISTINCT account_name AS name FROM src) a
),
terms AS (
  SELECT w.term, ledger_sync_term_key(w.term) AS id
  FROM (SELECT DISTINCT u.term FROM src, unnest(ARRAY[coin, symbol, business_type]) AS u(term)
        WHERE u.term IS NOT NULL) w
),
given AS (
  SELECT f.fmt, ledger_sync_form_key(f.fmt) AS id
  FROM (SELECT DISTINCT r->>'fmt' AS fmt FROM src) f WHERE f.fmt IS NOT NULL
),
empty AS (SELECT ledger_sync_form_key('{}') AS id),
split AS (
  SELECT s.*,
         CASE WHEN s.r ? 'fmt' THEN (SELECT id FROM given WHERE given.fmt = s.r->>'fmt')
              WHEN s.raw = '{}'::jsonb THEN (SELECT id FROM empty) ELSE ledger_sync_form_key(p.fmt) END AS form_id,
         CASE WHEN s.r ? 'fmt' THEN nullif(ARRAY(SELECT jsonb_array_elements_text(s.r->'extra')), '{}')
              WHEN s.raw = '{}'::jsonb THEN NULL ELSE p.extra END AS extra
  FROM src s
  LEFT JOIN LATERAL ledger_sync_split_jsonb(s.raw, s.id, s.coin, s.symbol, s.business_type, s.amount, s.balance,
                                            s.fill_fee, s.at, s.r->>'transfer_reason') p
    ON NOT s.r ? 'fmt' AND s.raw <> '{}'::jsonb
)
INSERT INTO bill_rows (account_id, coin, symbol, business_type, form_id, created_at, first_seen_at, bill_id,
                       amount, balance, fill_fee, source, transfer_reason, extra)
SELECT a.id, c.id, y.id, t.id, s.form_id, s.at, coalesce((s.r->>'first_seen_at')::timestamptz, now()), s.id,
       s.amount, s.balance, s.fill_fee, coalesce(s.r->>'source', 'v2'), s.r->>'transfer_reason', s.extra
FROM split s
JOIN accounts a ON a.name = s.account_name
JOIN terms c ON c.term = s.coin
LEFT JOIN terms y ON y.term = s.symbol
JOIN terms t ON t.term = s.business_type
${LEDGER_ORDER}
ON CONFLICT (account_id, created_at, bill_id) DO NOTHING`;
