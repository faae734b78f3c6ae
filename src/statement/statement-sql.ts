// The statement's figures, aggregated by PostgreSQL: no bill is loaded into memory, and every sum is
// NUMERIC read as text (exact, the scale as PostgreSQL's sum gives it).
import { accountKey, epochMs, instantOf } from "../store/ledger-rows.ts";
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
    `SELECT c.term AS coin, t.term AS business_type, m.bills, m.amount, m.fill_fee
     FROM (
       SELECT b.coin, b.business_type, count(*)::int AS bills, sum(b.amount)::text AS amount,
              sum(b.fill_fee)::text AS fill_fee
       FROM bill_rows b
       WHERE b.account_id = ${accountKey("$1")}
         AND b.created_at >= ${instantOf("$2")} AND b.created_at < ${instantOf("$3")}
       GROUP BY b.coin, b.business_type
     ) m
     JOIN bill_terms c ON c.id = m.coin JOIN bill_terms t ON t.id = m.business_type
     ORDER BY c.term, t.term`,
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
 * toMs (the closing one), in ledger order (created_at, then bill id). The account's coins come from
 * bill_coins; each anchor is one descending probe of bill_rows' (account_id, coin, created_at) index
 * in the months up to its bound, or the coin's last bill carried out of an archived month
 * (ledger_sync_last_bill).
 */
export function anchorRows(db: Db, account: string, fromMs: number, toMs: number): Promise<AnchorRow[]> {
  const lastBefore = (bound: string) =>
    `SELECT b.bill_id::text AS bill_id, b.balance::text AS balance, ${epochMs("b.created_at")}::text AS at_ms
     FROM ledger_sync_last_bill(c.account_id, c.coin, ${instantOf(bound)}) b`;
  return db.$queryRawUnsafe<AnchorRow[]>(
    `SELECT t.term AS coin, o.bill_id AS opening_bill, o.balance AS opening_balance, o.at_ms AS opening_ms,
            l.bill_id AS closing_bill, l.balance AS closing_balance, l.at_ms AS closing_ms
     FROM bill_coins c
     JOIN bill_terms t ON t.id = c.coin
     LEFT JOIN LATERAL (${lastBefore("$2")}) o ON true
     JOIN LATERAL (${lastBefore("$3")}) l ON true
     WHERE c.account_id = ${accountKey("$1")}
     ORDER BY t.term`,
    account,
    String(fromMs),
    String(toMs),
  );
}
