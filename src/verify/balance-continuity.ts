// Balance continuity: per account and coin, in ledger order (created_at, bill_id), each bill's
// balance must follow from the previous bill's balance and this bill's amount. Where one does not,
// a bill is missing or altered between the two. The exact rule is not documented, so we find the
// one the data obeys (with or without fill_fee); when real data obeys none, we say so instead of
// flagging every row. Computed in SQL: one pass to choose the rule, one to list the breaks.
//
// A range that starts after the first bill is chained to what came before it: each coin's last bill
// before the range is its anchor, so the first bill in the range is checked too (and the worker's
// incremental verify, which checks only what is new, misses no pair at its seam).
import type { Db } from "../store/prisma.ts";

export const RULES = {
  plain: "balance = previous balance + amount",
  minus_fee: "balance = previous balance + amount - fill_fee",
  plus_fee: "balance = previous balance + amount + fill_fee",
} as const;
export type Rule = keyof typeof RULES;

const EXPECTED: Record<Rule, string> = {
  plain: "prev_balance + amount",
  minus_fee: "prev_balance + amount - fill_fee",
  plus_fee: "prev_balance + amount + fill_fee",
};

export interface ContinuityBreak {
  coin: string;
  previousBillId: string;
  billId: string;
  expectedBalance: string;
  actualBalance: string;
  /** Time between the two bills, ms: where to look for a missing bill. */
  gapMs: number;
  previousAt: string;
  at: string;
  previousAtMs: number;
  atMs: number;
}

export interface CoinContinuity {
  coin: string;
  /** Consecutive pairs checked. */
  pairs: number;
  /** The rule the data obeys, or null when no rule explains most pairs. */
  rule: Rule | null;
  /** Pairs each rule explains (for the report: how clear the choice was). */
  explained: Record<Rule, number>;
  breaks: ContinuityBreak[];
  /** More breaks exist than listed. */
  truncated: boolean;
  /** Creation time of the coin's last bill in the range (epoch ms). */
  lastAtMs: number;
}

export interface ContinuityOptions {
  account: string;
  fromMs?: number;
  toMs?: number;
  /** Breaks listed per coin at most. */
  maxBreaks?: number;
  /** Rules already established per coin (the worker's incremental form): used instead of choosing. */
  rules?: Record<string, Rule>;
}

// A rule must explain at least this share of pairs to be believed.
const MIN_SHARE = 0.9;

// $1 account, $2 from, $3 to (epoch ms, both included). in_range marks the bills under check; the
// anchors only give the first of them a predecessor.
const chain = `
  WITH r AS (
    SELECT coin, bill_id, created_at_ms, amount, balance, fill_fee, true AS in_range
    FROM bills WHERE account_name = $1 AND created_at_ms >= $2 AND created_at_ms <= $3
      -- The same range on created_at, which (account_name, created_at) indexes: an incremental
      -- verify reads only the new bills, not the whole history.
      AND created_at >= timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
      AND created_at <= timestamptz 'epoch' + least($3::bigint, 9000000000000000) * interval '1 millisecond'
  ),
  anchor AS (
    SELECT a.*, false AS in_range FROM (SELECT DISTINCT coin FROM r) k
    CROSS JOIN LATERAL (
      SELECT coin, bill_id, created_at_ms, amount, balance, fill_fee FROM bills b
      WHERE b.account_name = $1 AND b.coin = k.coin AND b.created_at_ms < $2
      ORDER BY b.created_at_ms DESC, b.bill_id::numeric DESC LIMIT 1
    ) a
  ),
  c AS (
    SELECT *, lag(bill_id) OVER w AS prev_id, lag(balance) OVER w AS prev_balance, lag(created_at_ms) OVER w AS prev_ms
    FROM (SELECT * FROM r UNION ALL SELECT * FROM anchor) x
    WINDOW w AS (PARTITION BY coin ORDER BY created_at_ms, bill_id::numeric)
  )`;

export async function checkBalanceContinuity(db: Db, o: ContinuityOptions): Promise<CoinContinuity[]> {
  const from = String(o.fromMs ?? 0);
  const to = String(o.toMs ?? Number.MAX_SAFE_INTEGER);
  const counts = await db.$queryRawUnsafe<
    { coin: string; pairs: number; last_at: string; plain: number; minus_fee: number; plus_fee: number }[]
  >(
    `${chain}
     SELECT coin, count(*) FILTER (WHERE prev_id IS NOT NULL)::int AS pairs, max(created_at_ms)::text AS last_at,
       count(*) FILTER (WHERE prev_id IS NOT NULL AND balance = ${EXPECTED.plain})::int AS plain,
       count(*) FILTER (WHERE prev_id IS NOT NULL AND balance = ${EXPECTED.minus_fee})::int AS minus_fee,
       count(*) FILTER (WHERE prev_id IS NOT NULL AND balance = ${EXPECTED.plus_fee})::int AS plus_fee
     FROM c WHERE in_range GROUP BY coin ORDER BY coin`,
    o.account,
    from,
    to,
  );
  const out: CoinContinuity[] = [];
  const maxBreaks = o.maxBreaks ?? 1000;
  for (const c of counts) {
    const explained = { plain: c.plain, minus_fee: c.minus_fee, plus_fee: c.plus_fee };
    // Most pairs explained wins; on a tie (fees all zero) the plain rule.
    const best = (Object.keys(explained) as Rule[]).reduce((a, b) => (explained[b] > explained[a] ? b : a), "plain");
    const known = o.rules?.[c.coin];
    const rule = known ?? (c.pairs === 0 || explained[best] >= c.pairs * MIN_SHARE ? best : null);
    let breaks: ContinuityBreak[] = [];
    let truncated = false;
    if (rule) {
      const rows = await db.$queryRawUnsafe<
        {
          prev_id: string;
          bill_id: string;
          expected: string;
          actual: string;
          prev_ms: string;
          at_ms: string;
          prev_at: string;
          at: string;
        }[]
      >(
        `${chain}
         SELECT prev_id, bill_id, (${EXPECTED[rule]})::text AS expected, balance::text AS actual,
                prev_ms::text AS prev_ms, created_at_ms::text AS at_ms,
                to_char(to_timestamp(prev_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS prev_at,
                to_char(to_timestamp(created_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
         FROM c WHERE in_range AND coin = $4 AND prev_id IS NOT NULL AND balance <> ${EXPECTED[rule]}
         ORDER BY created_at_ms, bill_id::numeric LIMIT $5`,
        o.account,
        from,
        to,
        c.coin,
        maxBreaks + 1,
      );
      truncated = rows.length > maxBreaks;
      breaks = rows.slice(0, maxBreaks).map((r) => ({
        coin: c.coin,
        previousBillId: r.prev_id,
        billId: r.bill_id,
        expectedBalance: r.expected,
        actualBalance: r.actual,
        gapMs: Number(r.at_ms) - Number(r.prev_ms),
        previousAt: r.prev_at,
        at: r.at,
        previousAtMs: Number(r.prev_ms),
        atMs: Number(r.at_ms),
      }));
    }
    out.push({ coin: c.coin, pairs: c.pairs, rule, explained, breaks, truncated, lastAtMs: Number(c.last_at) });
  }
  return out;
}
