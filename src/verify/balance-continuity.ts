// Balance continuity: per account and coin, in ledger order (created_at, bill_id), each bill's
// balance must follow from the previous bill's balance and this bill's amount. Where one does not,
// a bill is missing or altered between the two. The exact rule is not documented, so we find the
// one the data obeys (with or without fill_fee); when real data obeys none, we say so instead of
// flagging every row. Computed in SQL (chain-sql.ts): one pass counts the pairs each rule explains,
// and only a coin with breaks under its rule is read again, to list them.
//
// A range that starts after the first bill is chained to what came before it: each coin's last bill
// before the range is its anchor, so the first bill in the range is checked too (and the worker's
// incremental verify, which checks only what is new, misses no pair at its seam).
import type { Db } from "../store/prisma.ts";
import { readChain } from "./chain-read.ts";
import { breaksSql, countsSql, type ChainSpan } from "./chain-sql.ts";
import type { Rule } from "./rules.ts";

export { RULES, type Rule } from "./rules.ts";

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

interface Counts {
  coin: string;
  pairs: number;
  last_at: string;
  plain: number;
  minus_fee: number;
  plus_fee: number;
}

export async function checkBalanceContinuity(db: Db, o: ContinuityOptions): Promise<CoinContinuity[]> {
  const span: ChainSpan = { fromMs: o.fromMs, toMs: o.toMs };
  const counts = await readChain<Counts>(db, o.account, span, countsSql(span));
  const out: CoinContinuity[] = [];
  const maxBreaks = o.maxBreaks ?? 1000;
  for (const c of counts) {
    const explained = { plain: c.plain, minus_fee: c.minus_fee, plus_fee: c.plus_fee };
    // Most pairs explained wins; on a tie (fees all zero) the plain rule.
    const best = (Object.keys(explained) as Rule[]).reduce((a, b) => (explained[b] > explained[a] ? b : a), "plain");
    const known = o.rules?.[c.coin];
    const rule = known ?? (c.pairs === 0 || explained[best] >= c.pairs * MIN_SHARE ? best : null);
    // Every pair the rule does not explain is a break: the counts say how many before any is read.
    const broken = rule ? c.pairs - explained[rule] : 0;
    const breaks = broken > 0 && maxBreaks > 0 ? await listBreaks(db, o.account, span, c.coin, rule!, maxBreaks) : [];
    out.push({
      coin: c.coin,
      pairs: c.pairs,
      rule,
      explained,
      breaks,
      truncated: broken > maxBreaks,
      lastAtMs: Number(c.last_at),
    });
  }
  return out;
}

async function listBreaks(
  db: Db,
  account: string,
  span: ChainSpan,
  coin: string,
  rule: Rule,
  maxBreaks: number,
): Promise<ContinuityBreak[]> {
  const rows = await readChain<{
    prev_id: string;
    bill_id: string;
    expected: string;
    actual: string;
    prev_ms: string;
    at_ms: string;
    prev_at: string;
    at: string;
  }>(db, account, span, breaksSql(span, rule), coin, maxBreaks);
  return rows.map((r) => ({
    coin,
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
