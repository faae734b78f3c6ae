// A coin's balance over a range, downsampled by PostgreSQL so that a chart of a million bills sends
// a few hundred rows: the range is cut into at most `maxPoints` equal time buckets, and each bucket
// with bills gives its first and last balance in ledger order and its lowest and highest, exact.
//
// Index-friendly on purpose: each bucket is one range scan of bill_rows' index
// (account_id, coin, created_at) in the months it spans, so nothing is sorted or hashed, and the first and last
// balance are two probes of the same index at the bucket's first and last millisecond (ties in a
// millisecond broken by bill id as a number, the ledger order). The cost is one pass over the
// range's bills, read in index order (docs/design/console.md has the figure for a million).
import type { Db } from "../../store/prisma.ts";
import { accountKey, epochMs, instantOf, termKey } from "../../store/ledger-rows.ts";

export interface BalanceBucket {
  /** First and last bill's creation time in the bucket (epoch ms). */
  firstMs: number;
  lastMs: number;
  /** Balances, exact: after the bucket's first bill, after its last, lowest, highest. */
  first: string;
  last: string;
  low: string;
  high: string;
  bills: number;
}

export interface BalanceSeries {
  fromMs: number;
  toMs: number;
  /** Width of a bucket (ms). */
  bucketMs: number;
  buckets: BalanceBucket[];
}

const OF_COIN = `b.account_id = ${accountKey("$1")} AND b.coin = ${termKey("$2")}`;

const SERIES_SQL = `
SELECT ${epochMs("a.first_at")}::text AS first_ms, ${epochMs("a.last_at")}::text AS last_ms, a.low::text, a.high::text,
  a.bills::int,
  (SELECT b.balance::text FROM bill_rows b WHERE ${OF_COIN} AND b.created_at = a.first_at
   ORDER BY b.bill_id LIMIT 1) AS first,
  (SELECT b.balance::text FROM bill_rows b WHERE ${OF_COIN} AND b.created_at = a.last_at
   ORDER BY b.bill_id DESC LIMIT 1) AS last
FROM generate_series(0, $5::int - 1) AS s(i)
CROSS JOIN LATERAL (
  SELECT min(b.created_at) AS first_at, max(b.created_at) AS last_at, min(b.balance) AS low, max(b.balance) AS high,
         count(*) AS bills
  FROM bill_rows b
  WHERE ${OF_COIN}
    AND b.created_at >= ${instantOf("$3::bigint + s.i * $6::bigint")}
    AND b.created_at < ${instantOf("least($4::bigint, $3::bigint + (s.i + 1) * $6::bigint)")}
) a
WHERE a.bills > 0
ORDER BY s.i`;

export async function readBalanceSeries(
  db: Db,
  o: { account: string; coin: string; fromMs: number; toMs: number; maxPoints: number },
): Promise<BalanceSeries> {
  const bucketMs = Math.max(1, Math.ceil((o.toMs - o.fromMs) / o.maxPoints));
  const buckets = Math.ceil((o.toMs - o.fromMs) / bucketMs);
  const rows = await db.$queryRawUnsafe<
    { first_ms: string; last_ms: string; low: string; high: string; bills: number; first: string; last: string }[]
  >(SERIES_SQL, o.account, o.coin, String(o.fromMs), String(o.toMs), buckets, String(bucketMs));
  return {
    fromMs: o.fromMs,
    toMs: o.toMs,
    bucketMs,
    buckets: rows.map((r) => ({
      firstMs: Number(r.first_ms),
      lastMs: Number(r.last_ms),
      first: r.first,
      last: r.last,
      low: r.low,
      high: r.high,
      bills: r.bills,
    })),
  };
}
