// Read-side summary of what is stored for an account (demo and status output).
import type { Db } from "./prisma.ts";
import { accountKey } from "./ledger-rows.ts";

export interface BillsSummary {
  total: number;
  byType: { coin: string; businessType: string; count: number; amountSum: string }[];
  balances: { coin: string; balance: string; billId: string; createdAt: string }[];
  quarantined: number;
  /** Row counts of the snapshot tables. */
  snapshotRows: Record<string, number>;
}

const SNAPSHOT_TABLES = [
  "account_snapshots",
  "fee_settings",
  "positions_current",
  "position_history",
  "collateral_history",
] as const;

export async function summariseBills(db: Db, accountName: string): Promise<BillsSummary> {
  const byType = await db.$queryRawUnsafe<{ coin: string; businessType: string; count: number; amountSum: string }[]>(
    `SELECT c.term AS coin, t.term AS "businessType", m.count, m.sum AS "amountSum"
     FROM (SELECT b.coin, b.business_type, count(*)::int AS count, sum(b.amount)::text AS sum FROM bill_rows b
           WHERE b.account_id = ${accountKey("$1")} GROUP BY b.coin, b.business_type) m
     JOIN bill_terms c ON c.id = m.coin JOIN bill_terms t ON t.id = m.business_type
     ORDER BY c.term, t.term`,
    accountName,
  );
  // Latest by (created_at, bill_id): the ledger order within one millisecond follows the id. One
  // descending probe of bill_rows' (account_id, coin, created_at) index per coin of bill_coins.
  const balances = await db.$queryRawUnsafe<{ coin: string; balance: string; billId: string; createdAt: string }[]>(
    `SELECT t.term AS coin, l.balance::text AS balance, l.bill_id::text AS "billId",
            to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt"
     FROM bill_coins c JOIN bill_terms t ON t.id = c.coin
     JOIN LATERAL (SELECT b.balance, b.bill_id, b.created_at FROM bill_rows b
                   WHERE b.account_id = c.account_id AND b.coin = c.coin
                   ORDER BY b.created_at DESC, b.bill_id DESC LIMIT 1) l ON true
     WHERE c.account_id = ${accountKey("$1")} ORDER BY t.term`,
    accountName,
  );
  const quarantined = await db.quarantine.count({ where: { accountName } });
  const perTable = SNAPSHOT_TABLES.map((t) => `(SELECT count(*)::int FROM ${t} WHERE account_name = $1) AS ${t}`);
  const [counts] = await db.$queryRawUnsafe<Record<string, number>[]>(`SELECT ${perTable.join(", ")}`, accountName);
  return { total: byType.reduce((n, r) => n + r.count, 0), byType, balances, quarantined, snapshotRows: counts ?? {} };
}
