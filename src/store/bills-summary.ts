// Read-side summary of what is stored for an account (demo and status output).
import type { Db } from "./prisma.ts";

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
    `SELECT coin, business_type AS "businessType", count(*)::int AS count, sum(amount)::text AS "amountSum"
     FROM bills WHERE account_name = $1 GROUP BY coin, business_type ORDER BY coin, business_type`,
    accountName,
  );
  // Latest by (created_at, bill_id): the ledger order within one millisecond follows the id.
  const balances = await db.$queryRawUnsafe<{ coin: string; balance: string; billId: string; createdAt: string }[]>(
    `SELECT DISTINCT ON (coin) coin, balance::text AS balance, bill_id AS "billId",
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt"
     FROM bills WHERE account_name = $1 ORDER BY coin, created_at DESC, bill_id::numeric DESC`,
    accountName,
  );
  const quarantined = await db.quarantine.count({ where: { accountName } });
  const perTable = SNAPSHOT_TABLES.map((t) => `(SELECT count(*)::int FROM ${t} WHERE account_name = $1) AS ${t}`);
  const [counts] = await db.$queryRawUnsafe<Record<string, number>[]>(`SELECT ${perTable.join(", ")}`, accountName);
  return { total: byType.reduce((n, r) => n + r.count, 0), byType, balances, quarantined, snapshotRows: counts ?? {} };
}
