// An account's coins and the latest balance of each, from the BI view v_balances (ledger order: the
// bill with the latest created_at, ties by bill id as a number).
import type { Db } from "../../store/prisma.ts";

export interface CoinBalance {
  coin: string;
  /** Exact, as stored. */
  balance: string;
  asOf: Date;
  billId: string;
}

export async function readCoinBalances(db: Db, account: string): Promise<CoinBalance[]> {
  return db.$queryRawUnsafe<CoinBalance[]>(
    `SELECT coin, balance::text AS balance, as_of AS "asOf", bill_id AS "billId"
     FROM v_balances WHERE account_name = $1 ORDER BY coin`,
    account,
  );
}
