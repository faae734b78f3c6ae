// The balance chain's statements: each bill next to the one before it of its coin in ledger order
// (created_at_ms, bill_id::numeric), with exact NUMERIC arithmetic, so that only figures leave the
// server: one row per coin, or a coin's breaks. docs/design/verify-speed.md says why in SQL.
//
// $1 account. A range adds $2 from and $3 to (epoch ms, both included): in_range marks the bills
// under check, and each coin's last bill before the range (its anchor) only gives the first of them
// a predecessor. A whole history has no anchors: its bills come in the order of the index
// (account_name, coin, created_at_ms), so the window sorts only bills of one coin and millisecond.
import type { Rule } from "./rules.ts";

export interface ChainSpan {
  fromMs?: number;
  toMs?: number;
}

/** A whole history: no bound given (a check of everything, the CLI's default). */
export const isWholeHistory = (s: ChainSpan): boolean => s.fromMs === undefined && s.toMs === undefined;

/** The statement's parameters after the account: the range, when there is one. */
export const spanParams = (s: ChainSpan): string[] =>
  isWholeHistory(s) ? [] : [String(s.fromMs ?? 0), String(s.toMs ?? Number.MAX_SAFE_INTEGER)];

const COLUMNS = "coin, bill_id, created_at_ms, amount, balance, fill_fee";

const WHOLE = `SELECT ${COLUMNS}, true AS in_range FROM bills WHERE account_name = $1`;

const RANGED = `
  WITH r AS (
    SELECT ${COLUMNS}, true AS in_range
    FROM bills WHERE account_name = $1 AND created_at_ms >= $2 AND created_at_ms <= $3
      -- The same range on created_at, which (account_name, created_at) indexes: an incremental
      -- verify reads only the new bills, not the whole history.
      AND created_at >= timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
      AND created_at <= timestamptz 'epoch' + least($3::bigint, 9000000000000000) * interval '1 millisecond'
  ),
  anchor AS (
    SELECT a.*, false AS in_range FROM (SELECT DISTINCT coin FROM r) k
    CROSS JOIN LATERAL (
      SELECT ${COLUMNS} FROM bills b
      WHERE b.account_name = $1 AND b.coin = k.coin AND b.created_at_ms < $2
      ORDER BY b.created_at_ms DESC, b.bill_id::numeric DESC LIMIT 1
    ) a
  )
  SELECT * FROM r UNION ALL SELECT * FROM anchor`;

const source = (s: ChainSpan) => (isWholeHistory(s) ? WHOLE : RANGED);

const LEDGER_WINDOW = "WINDOW w AS (PARTITION BY coin ORDER BY created_at_ms, bill_id::numeric)";

/**
 * Per coin: pairs checked, the last bill's time, and the pairs each rule explains. `diff` is
 * balance - (previous balance + amount), computed once a bill: the plain rule holds where it is 0,
 * minus_fee where it is -fill_fee, plus_fee where it is fill_fee (NULL on a coin's first bill).
 */
export function countsSql(s: ChainSpan): string {
  return `
    SELECT coin, count(diff)::int AS pairs, max(created_at_ms)::text AS last_at,
           count(*) FILTER (WHERE diff = 0)::int AS plain,
           count(*) FILTER (WHERE -diff = fill_fee)::int AS minus_fee,
           count(*) FILTER (WHERE diff = fill_fee)::int AS plus_fee
    FROM (
      SELECT coin, created_at_ms, fill_fee, in_range, balance - (lag(balance) OVER w + amount) AS diff
      FROM (${source(s)}) x
      ${LEDGER_WINDOW}
    ) d
    WHERE in_range
    GROUP BY coin ORDER BY coin`;
}

const EXPECTED: Record<Rule, string> = {
  plain: "prev_balance + amount",
  minus_fee: "prev_balance + amount - fill_fee",
  plus_fee: "prev_balance + amount + fill_fee",
};

const utc = (ms: string) => `to_char(to_timestamp(${ms} / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** One coin's breaks under `rule`, in ledger order; the coin and the limit are the last two parameters. */
export function breaksSql(s: ChainSpan, rule: Rule): string {
  const n = spanParams(s).length + 2;
  return `
    SELECT prev_id, bill_id, (${EXPECTED[rule]})::text AS expected, balance::text AS actual,
           prev_ms::text AS prev_ms, created_at_ms::text AS at_ms,
           ${utc("prev_ms")} AS prev_at, ${utc("created_at_ms")} AS at
    FROM (
      SELECT *, lag(bill_id) OVER w AS prev_id, lag(balance) OVER w AS prev_balance,
             lag(created_at_ms) OVER w AS prev_ms
      FROM (${source(s)}) x
      WHERE coin = $${n}
      ${LEDGER_WINDOW}
    ) c
    WHERE in_range AND prev_id IS NOT NULL AND balance <> ${EXPECTED[rule]}
    ORDER BY created_at_ms, bill_id::numeric LIMIT $${n + 1}`;
}
