// A coin's days over a range, from the BI views (which read daily_rollups: a day filter reaches an
// index, so a range costs its days, not the account's bills): the realized result and its parts
// (v_daily_pnl), fees paid and fee income (v_fees, summed over symbols) and funding (v_funding,
// summed over symbols). Sums are PostgreSQL's, exact; every figure leaves as text.
import type { Db } from "../../store/prisma.ts";

export interface DailyResult {
  day: string;
  trading: string;
  liquidation: string;
  realizedPnl: string;
  fillFees: string;
  feeIncome: string;
  funding: string;
  settlements: number;
  bills: number;
}

// $1 account, $2 coin, $3 first day, $4 last day (both included).
const DAILY_SQL = `
WITH fees AS (
  SELECT day, sum(fee_income) AS fee_income FROM v_fees
  WHERE account_name = $1 AND coin = $2 AND day BETWEEN $3::date AND $4::date GROUP BY day
), funding AS (
  SELECT day, sum(funding) AS funding, sum(settlements)::int AS settlements FROM v_funding
  WHERE account_name = $1 AND coin = $2 AND day BETWEEN $3::date AND $4::date GROUP BY day
)
SELECT p.day::text AS day, p.trading::text AS trading, p.liquidation::text AS liquidation,
       p.realized_pnl::text AS "realizedPnl", p.fill_fees::text AS "fillFees",
       coalesce(fees.fee_income, 0)::text AS "feeIncome",
       coalesce(funding.funding, 0)::text AS funding, coalesce(funding.settlements, 0) AS settlements,
       p.bills::int AS bills
FROM v_daily_pnl p
LEFT JOIN fees USING (day)
LEFT JOIN funding USING (day)
WHERE p.account_name = $1 AND p.coin = $2 AND p.day BETWEEN $3::date AND $4::date
ORDER BY p.day`;

/** One row per day with bills of the coin in [from, to] (YYYY-MM-DD, both included). */
export async function readDailyResults(
  db: Db,
  o: { account: string; coin: string; from: string; to: string },
): Promise<DailyResult[]> {
  return db.$queryRawUnsafe<DailyResult[]>(DAILY_SQL, o.account, o.coin, o.from, o.to);
}
