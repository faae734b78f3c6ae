// Section 3 of the audit report: the bills of the period stored late, by two rules.
// 1. First stored after the period's first close: the month was sealed without them.
// 2. First stored more than SYNC_LOOKBACK_MS after their creation, although a run that had read their
//    time (its window held it) had ended before: the exchange served them after the incremental sync's
//    look-back had passed, so only a re-sweep, a repair or a later read found them. A bill first stored
//    by the first run to read its time (a backfill of past months) is not late by this rule, however
//    old it was: it is only counted (`backfilled`), or every month before the first sync would be late.
import { accountKey, instantOf } from "../../store/ledger-rows.ts";
import type { Db } from "../../store/prisma.ts";
import type { AuditReport } from "./report.ts";

interface Row {
  bill_id: string;
  created_at_ms: string;
  first_seen_at: Date;
  coin: string;
  business_type: string;
  amount: string;
  after_close: boolean;
  run_id: string | null;
  run_finished_at: Date | null;
}

// $1 account, [$2, $3) the period (ms), $4 SYNC_LOOKBACK_MS, $5 the first close's time (or NULL).
// `missed`: per bill, the first run that ended before the bill was stored and whose window held its
// time; each run's window is one range of bill_rows' (account_id, created_at) key.
const LATE_SQL = `WITH runs AS (
  SELECT r.id, r.finished_at, greatest(r.window_from, ${instantOf("$2")}) AS lo, r.window_to AS hi
  FROM sync_runs r
  WHERE r.account_name = $1 AND r.outcome IN ('ok', 'unverified') AND r.finished_at IS NOT NULL
    AND r.window_from_ms < $3::bigint AND r.window_to_ms >= $2::bigint
),
missed AS (
  SELECT DISTINCT ON (b.bill_id) b.bill_id, r.id::text AS run_id, r.finished_at AS run_finished_at
  FROM runs r
  JOIN bill_rows b
    ON b.account_id = ${accountKey("$1")} AND b.created_at >= r.lo AND b.created_at <= r.hi
   AND b.created_at < ${instantOf("$3")}
   AND b.first_seen_at > r.finished_at
   AND b.first_seen_at > b.created_at + $4::bigint * interval '1 millisecond'
  ORDER BY b.bill_id, r.finished_at, r.id
),
after_close AS (
  SELECT b.bill_id
  FROM bill_rows b
  WHERE b.account_id = ${accountKey("$1")}
    AND b.created_at >= ${instantOf("$2")} AND b.created_at < ${instantOf("$3")}
    AND b.first_seen_at > $5::timestamptz
)
SELECT b.bill_id, b.created_at_ms::text AS created_at_ms, b.first_seen_at, b.coin, b.business_type,
       b.amount::text AS amount, a.bill_id IS NOT NULL AS after_close, m.run_id, m.run_finished_at
FROM (SELECT bill_id FROM missed UNION SELECT bill_id FROM after_close) l
JOIN ledger_bills b
  ON b.account_id = ${accountKey("$1")} AND b.bill_key = l.bill_id
 AND b.created_at >= ${instantOf("$2")} AND b.created_at < ${instantOf("$3")}
LEFT JOIN after_close a ON a.bill_id = l.bill_id
LEFT JOIN missed m ON m.bill_id = l.bill_id
ORDER BY b.created_at, b.bill_key`;

export async function readLateBills(
  db: Db,
  account: string,
  period: { fromMs: number; toMs: number },
  lookbackMs: number,
): Promise<AuditReport["late"]> {
  const [first] = await db.$queryRawUnsafe<{ id: string; closed_at: Date }[]>(
    `SELECT c.id::text AS id, c.closed_at
     FROM period_closes c
     WHERE c.account_name = $1 AND c.period_start_ms = $2::bigint AND c.period_end_ms = $3::bigint
     ORDER BY c.closed_at, c.id
     LIMIT 1`,
    account,
    String(period.fromMs),
    String(period.toMs),
  );
  const args = [account, String(period.fromMs), String(period.toMs), String(lookbackMs)];
  const rows = await db.$queryRawUnsafe<Row[]>(LATE_SQL, ...args, first?.closed_at ?? null);
  const [past] = await db.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n
     FROM bill_rows b
     WHERE b.account_id = ${accountKey("$1")}
       AND b.created_at >= ${instantOf("$2")} AND b.created_at < ${instantOf("$3")}
       AND b.first_seen_at > b.created_at + $4::bigint * interval '1 millisecond'`,
    ...args,
  );
  const bills = rows.map((r) => ({
    billId: r.bill_id,
    createdAt: new Date(Number(r.created_at_ms)).toISOString(),
    firstSeenAt: r.first_seen_at.toISOString(),
    lateByMs: r.first_seen_at.getTime() - Number(r.created_at_ms),
    coin: r.coin,
    businessType: r.business_type,
    amount: r.amount,
    afterFirstClose: r.after_close && first ? { closeId: first.id, closedAt: first.closed_at.toISOString() } : null,
    pastLookback: r.run_id === null ? null : { runId: r.run_id, runFinishedAt: r.run_finished_at!.toISOString() },
  }));
  return {
    lookbackMs,
    firstClose: first ? { id: first.id, closedAt: first.closed_at.toISOString() } : null,
    bills,
    backfilled: past!.n - bills.filter((b) => b.pastLookback !== null).length,
  };
}
