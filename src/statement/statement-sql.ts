// The statement's figures, aggregated by PostgreSQL: no bill is loaded into memory, and every sum is
// NUMERIC read as text (exact, the scale as PostgreSQL's sum gives it).
import type { Db } from "../store/prisma.ts";

export interface MovementRow {
  coin: string;
  business_type: string;
  bills: number;
  amount: string;
  fill_fee: string;
}

/** Count and sums per coin and business type of the bills in [fromMs, toMs). */
export function movementRows(db: Db, account: string, fromMs: number, toMs: number): Promise<MovementRow[]> {
  return db.$queryRawUnsafe<MovementRow[]>(
    `SELECT coin, business_type, count(*)::int AS bills, sum(amount)::text AS amount, sum(fill_fee)::text AS fill_fee
     FROM bills
     WHERE account_name = $1 AND created_at_ms >= $2::bigint AND created_at_ms < $3::bigint
       -- The same range on created_at, which (account_name, created_at) indexes.
       AND created_at >= timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
       AND created_at < timestamptz 'epoch' + $3::bigint * interval '1 millisecond'
     GROUP BY coin, business_type ORDER BY coin, business_type`,
    account,
    String(fromMs),
    String(toMs),
  );
}

export interface AnchorRow {
  coin: string;
  opening_bill: string | null;
  opening_balance: string | null;
  opening_ms: string | null;
  closing_bill: string;
  closing_balance: string;
  closing_ms: string;
}

/**
 * Per coin with a bill before toMs: its last bill before fromMs (the opening balance) and before
 * toMs (the closing one), in ledger order (created_at_ms, then bill id as a number). The coins are
 * walked through the (account_name, coin, ...) index one by one instead of scanning every bill.
 */
export function anchorRows(db: Db, account: string, fromMs: number, toMs: number): Promise<AnchorRow[]> {
  const lastBefore = (bound: string) =>
    `SELECT bill_id, balance::text AS balance, created_at_ms::text AS at_ms FROM bills b
     WHERE b.account_name = $1 AND b.coin = c.coin AND b.created_at_ms < ${bound}::bigint
     ORDER BY b.created_at_ms DESC, b.bill_id::numeric DESC LIMIT 1`;
  return db.$queryRawUnsafe<AnchorRow[]>(
    `WITH RECURSIVE coins(coin) AS (
       SELECT min(coin) FROM bills WHERE account_name = $1
       UNION ALL
       SELECT (SELECT min(b.coin) FROM bills b WHERE b.account_name = $1 AND b.coin > c.coin) FROM coins c
       WHERE c.coin IS NOT NULL
     )
     SELECT c.coin, o.bill_id AS opening_bill, o.balance AS opening_balance, o.at_ms AS opening_ms,
            l.bill_id AS closing_bill, l.balance AS closing_balance, l.at_ms AS closing_ms
     FROM coins c
     LEFT JOIN LATERAL (${lastBefore("$2")}) o ON true
     JOIN LATERAL (${lastBefore("$3")}) l ON true
     WHERE c.coin IS NOT NULL
     ORDER BY c.coin`,
    account,
    String(fromMs),
    String(toMs),
  );
}
