// The balance chain's statements: each bill next to the one before it of its coin in ledger order
// (created_at, bill_id), with exact NUMERIC arithmetic, so that only figures leave the
// server: one row per coin, or a coin's breaks. docs/design/verify-speed.md says why in SQL.
//
// $1 account. A range adds $2 from and $3 to (epoch ms, both included): in_range marks the bills
// under check, and each coin's last bill before the range (its anchor) only gives the first of them
// a predecessor. A whole history has no anchors: its bills come in the order of bill_rows' index
// (account_id, coin, created_at), so the window sorts only bills of one coin and millisecond.
import { accountKey, epochMs, instantOf, termKey } from "../store/ledger-rows.ts";
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

// Each bill as the window needs it: keys and numbers only, bill_rows' own columns (no join, no text
// made per bill: the coin's name and the texts a break reports are read after the window).
const COLUMNS = "b.coin AS coin_key, b.bill_id AS id, b.created_at, b.amount, b.balance, b.fill_fee";
const ROWS = `bill_rows b WHERE b.account_id = ${accountKey("$1")}`;

const WHOLE = `SELECT ${COLUMNS}, true AS in_range FROM ${ROWS}`;

/** A range's bounds as SQL expressions of epoch ms: the parameters $2 and $3 unless embedded. */
export interface SpanBounds {
  fromMs: string;
  toMs: string;
}

const PARAMETERS: SpanBounds = { fromMs: "$2", toMs: "$3" };

// The range on created_at, which both indexes lead with after the account: an incremental verify
// reads only the new bills, and only the months they are in.
const inRange = (b: SpanBounds) => `
    SELECT ${COLUMNS}, true AS in_range
    FROM ${ROWS} AND b.created_at >= ${instantOf(b.fromMs)}
      AND b.created_at <= ${instantOf(`least(${b.toMs}::bigint, 9000000000000000)`)}`;

// Each coin's anchor is its last bill before the range, found through index 2, or carried out of an
// archived month (ledger_sync_last_bill): only its balance counts.
const RANGED = `
  WITH r AS (${inRange(PARAMETERS)}
  ),
  anchor AS (
    SELECT a.*, false AS in_range FROM (SELECT DISTINCT coin_key FROM r) k
    CROSS JOIN LATERAL (
      SELECT k.coin_key, b.bill_id AS id, b.created_at, NULL::numeric AS amount, b.balance, NULL::numeric AS fill_fee
      FROM ledger_sync_last_bill(${accountKey("$1")}, k.coin_key, ${instantOf("$2")}) b
    ) a
  )
  SELECT * FROM r UNION ALL SELECT * FROM anchor`;

/**
 * True when the range holds no bill, `b` its bounds as expressions of another statement ($1 still
 * the account): countsSql of that range then has no row, since it counts only the bills in range
 * (a coin's anchor is read only for a coin that has one). Another statement can so learn that a
 * range's counts are empty without planning their read. A function (ledger_sync_bill_in_range,
 * the same range as inRange): bounds computed in the statement prune no month when it is planned,
 * and the function's plan, kept by the connection, prunes them as it runs.
 */
export const noBillInRangeSql = (b: SpanBounds): string =>
  `NOT ledger_sync_bill_in_range(${accountKey("$1")}, ${instantOf(b.fromMs)}, ` +
  `${instantOf(`least(${b.toMs}::bigint, 9000000000000000)`)})`;

const source = (s: ChainSpan) => (isWholeHistory(s) ? WHOLE : RANGED);

const LEDGER_WINDOW = "WINDOW w AS (PARTITION BY coin_key ORDER BY created_at, id)";

/**
 * Per coin: pairs checked, the last bill's time, and the pairs each rule explains. `diff` is
 * balance - (previous balance + amount), computed once a bill: the plain rule holds where it is 0,
 * minus_fee where it is -fill_fee, plus_fee where it is fill_fee (NULL on a coin's first bill).
 * Grouped by the coin's key, the order the window already gives (no second sort of the bills); the
 * coin's name is joined to the few rows that come out.
 */
export function countsSql(s: ChainSpan): string {
  return `
    SELECT t.term AS coin, g.pairs, ${epochMs("g.last_at")}::text AS last_at, g.plain, g.minus_fee, g.plus_fee
    FROM (
      SELECT coin_key, count(diff)::int AS pairs, max(created_at) AS last_at,
             count(*) FILTER (WHERE diff = 0)::int AS plain,
             count(*) FILTER (WHERE -diff = fill_fee)::int AS minus_fee,
             count(*) FILTER (WHERE diff = fill_fee)::int AS plus_fee
      FROM (
        SELECT coin_key, created_at, fill_fee, in_range, balance - (lag(balance) OVER w + amount) AS diff
        FROM (${source(s)}) x
        ${LEDGER_WINDOW}
      ) d
      WHERE in_range
      GROUP BY coin_key
    ) g
    JOIN bill_terms t ON t.id = g.coin_key
    ORDER BY t.term`;
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
    SELECT prev_id::text AS prev_id, id::text AS bill_id, (${EXPECTED[rule]})::text AS expected,
           balance::text AS actual, prev_ms::text AS prev_ms, at_ms::text AS at_ms,
           ${utc("prev_ms")} AS prev_at, ${utc("at_ms")} AS at
    FROM (
      SELECT *, ${epochMs("created_at")} AS at_ms, ${epochMs("lag(created_at) OVER w")} AS prev_ms,
             lag(id) OVER w AS prev_id, lag(balance) OVER w AS prev_balance
      FROM (${source(s)}) x
      WHERE coin_key = ${termKey(`$${n}`)}
      ${LEDGER_WINDOW}
    ) c
    WHERE in_range AND prev_id IS NOT NULL AND balance <> ${EXPECTED[rule]}
    ORDER BY created_at, id LIMIT $${n + 1}`;
}
