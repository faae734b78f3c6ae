// For comparison with a statement's closing balance: the coin's collateral as of the snapshot
// nearest the period's end (before or after it), and the ledger balance at that same instant. The
// API gives collateral by coin id and bills by coin name, so only coins paired in COIN_NAMES have one.
import { Decimal } from "../store/numeric.ts";
import type { Db } from "../store/prisma.ts";
import { numericText } from "./numeric-text.ts";

export interface CollateralComparison {
  coinId: string;
  /** When ledger-sync observed the snapshot. */
  observedAt: string;
  /** Every collateral record of the coin together, as of that snapshot. */
  amount: string;
  /** The coin's main record (not an isolated position's); null when it has none. */
  mainAmount: string | null;
  records: number;
  /** Balance after the coin's last bill at or before the snapshot; null when there is none. */
  ledgerBalance: string | null;
  /** amount − ledgerBalance (the main record's, when there is one); null without a ledger balance. */
  difference: string | null;
}

const AT = "(timestamptz 'epoch' + $3::bigint * interval '1 millisecond')";

interface SnapshotRow {
  observed_ms: string;
  amount: string;
  main_amount: string | null;
  records: number;
  ledger_balance: string | null;
}

export async function collateralNear(
  db: Db,
  account: string,
  coin: string,
  coinId: string,
  atMs: number,
): Promise<CollateralComparison | null> {
  // The nearest observation instant, then each record's latest version at or before it.
  const [row] = await db.$queryRawUnsafe<SnapshotRow[]>(
    `WITH nearest AS (
       SELECT observed_at FROM (
         (SELECT observed_at FROM collateral_history WHERE account_name = $1 AND coin_id = $2 AND observed_at < ${AT}
          ORDER BY observed_at DESC LIMIT 1)
         UNION ALL
         (SELECT observed_at FROM collateral_history WHERE account_name = $1 AND coin_id = $2 AND observed_at >= ${AT}
          ORDER BY observed_at LIMIT 1)
       ) c ORDER BY abs(extract(epoch FROM observed_at - ${AT})) LIMIT 1
     ),
     records AS (
       SELECT DISTINCT ON (h.margin_mode, h.cross_contract_id, h.cross_symbol, h.isolated_position_id)
              h.amount, h.isolated_position_id = '0' AS main
       FROM collateral_history h, nearest n
       WHERE h.account_name = $1 AND h.coin_id = $2 AND h.observed_at <= n.observed_at
       ORDER BY h.margin_mode, h.cross_contract_id, h.cross_symbol, h.isolated_position_id,
                h.observed_at DESC, h.id DESC
     )
     SELECT (extract(epoch FROM n.observed_at) * 1000)::bigint::text AS observed_ms,
            (SELECT sum(amount)::text FROM records) AS amount,
            (SELECT sum(amount)::text FROM records WHERE main) AS main_amount,
            (SELECT count(*)::int FROM records) AS records,
            (SELECT b.balance::text FROM bills b
             WHERE b.account_name = $1 AND b.coin = $4
               AND b.created_at_ms <= (extract(epoch FROM n.observed_at) * 1000)::bigint
             ORDER BY b.created_at_ms DESC, b.bill_id::numeric DESC LIMIT 1) AS ledger_balance
     FROM nearest n`,
    account,
    coinId,
    String(atMs),
    coin,
  );
  if (!row) return null;
  const compared = row.main_amount ?? row.amount;
  return {
    coinId,
    observedAt: new Date(Number(row.observed_ms)).toISOString(),
    amount: row.amount,
    mainAmount: row.main_amount,
    records: row.records,
    ledgerBalance: row.ledger_balance,
    difference:
      row.ledger_balance === null
        ? null
        : numericText(new Decimal(compared).minus(row.ledger_balance), [compared, row.ledger_balance]),
  };
}
