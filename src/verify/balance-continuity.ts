// Balance continuity: per account and coin, in ledger order (created_at, bill_id), each bill's
// balance must follow from the previous bill's balance and this bill's amount. Where one does not,
// a bill is missing or altered between the two. The exact rule is not documented, so we find the
// one the data obeys (with or without fill_fee); when real data obeys none, we say so instead of
// flagging every row. Computed in SQL: one pass to choose the rule, one to list the breaks.
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
}

export interface ContinuityOptions {
  account: string;
  fromMs?: number;
  toMs?: number;
  /** Breaks listed per coin at most. */
  maxBreaks?: number;
}

// A rule must explain at least this share of pairs to be believed.
const MIN_SHARE = 0.9;

const chain = `
  SELECT coin, bill_id, created_at_ms, amount, balance, fill_fee,
         lag(bill_id) OVER w AS prev_id, lag(balance) OVER w AS prev_balance, lag(created_at_ms) OVER w AS prev_ms
  FROM bills
  WHERE account_name = $1 AND created_at_ms >= $2 AND created_at_ms <= $3
  WINDOW w AS (PARTITION BY coin ORDER BY created_at_ms, bill_id::numeric)`;

export async function checkBalanceContinuity(db: Db, o: ContinuityOptions): Promise<CoinContinuity[]> {
  const from = String(o.fromMs ?? 0);
  const to = String(o.toMs ?? Number.MAX_SAFE_INTEGER);
  const counts = await db.$queryRawUnsafe<{ coin: string; pairs: number; plain: number; minus_fee: number; plus_fee: number }[]>(
    `WITH c AS (${chain})
     SELECT coin, count(*) FILTER (WHERE prev_id IS NOT NULL)::int AS pairs,
       count(*) FILTER (WHERE prev_id IS NOT NULL AND balance = ${EXPECTED.plain})::int AS plain,
       count(*) FILTER (WHERE prev_id IS NOT NULL AND balance = ${EXPECTED.minus_fee})::int AS minus_fee,
       count(*) FILTER (WHERE prev_id IS NOT NULL AND balance = ${EXPECTED.plus_fee})::int AS plus_fee
     FROM c GROUP BY coin ORDER BY coin`,
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
    const rule = c.pairs === 0 || explained[best] >= c.pairs * MIN_SHARE ? best : null;
    let breaks: ContinuityBreak[] = [];
    let truncated = false;
    if (rule) {
      const rows = await db.$queryRawUnsafe<{ prev_id: string; bill_id: string; expected: string; actual: string; gap_ms: string; prev_at: string; at: string }[]>(
        `WITH c AS (${chain})
         SELECT prev_id, bill_id, (${EXPECTED[rule]})::text AS expected, balance::text AS actual, (created_at_ms - prev_ms)::text AS gap_ms,
                to_char(to_timestamp(prev_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS prev_at,
                to_char(to_timestamp(created_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
         FROM c WHERE coin = $4 AND prev_id IS NOT NULL AND balance <> ${EXPECTED[rule]}
         ORDER BY created_at_ms, bill_id::numeric LIMIT $5`,
        o.account,
        from,
        to,
        c.coin,
        maxBreaks + 1,
      );
      truncated = rows.length > maxBreaks;
      breaks = rows.slice(0, maxBreaks).map((r) => ({ coin: c.coin, previousBillId: r.prev_id, billId: r.bill_id, expectedBalance: r.expected, actualBalance: r.actual, gapMs: Number(r.gap_ms), previousAt: r.prev_at, at: r.at }));
    }
    out.push({ coin: c.coin, pairs: c.pairs, rule, explained, breaks, truncated });
  }
  return out;
}
