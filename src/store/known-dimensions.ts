// Coins, symbols and business types already stored for an account: candidate filter values when a single
// millisecond holds more bills than one page and must be split (streams/bills-v2/millisecond-split.ts).
import { accountKey } from "./ledger-rows.ts";
import type { Db } from "./prisma.ts";

export interface KnownDimensions {
  coins: string[];
  /** businessType values stored (the spec's, and any others the exchange sent). */
  businessTypes: string[];
  /** Symbols per coin; every stored coin is a key, and a coin whose bills have no contract has []. */
  symbolsByCoin: Map<string, string[]>;
}

export async function readKnownDimensions(db: Db, accountName: string): Promise<KnownDimensions> {
  const rows = await db.$queryRawUnsafe<Array<{ coin: string; symbol: string | null }>>(
    // Distinct keys of bill_rows first (the account's rows only), then their terms.
    `SELECT c.term AS coin, s.term AS symbol
     FROM (SELECT DISTINCT coin, symbol FROM bill_rows WHERE account_id = ${accountKey("$1")}) d
     JOIN bill_terms c ON c.id = d.coin
     LEFT JOIN bill_terms s ON s.id = d.symbol`,
    accountName,
  );
  const symbolsByCoin = new Map<string, string[]>();
  for (const { coin, symbol } of rows) {
    const list = symbolsByCoin.get(coin) ?? [];
    // NULL (no contract) is not a value the symbol filter can ask for.
    if (symbol !== null) list.push(symbol);
    symbolsByCoin.set(coin, list);
  }
  const types = await db.$queryRawUnsafe<Array<{ business_type: string }>>(
    `SELECT t.term AS business_type
     FROM (SELECT DISTINCT business_type FROM bill_rows WHERE account_id = ${accountKey("$1")}) d
     JOIN bill_terms t ON t.id = d.business_type`,
    accountName,
  );
  return { coins: [...symbolsByCoin.keys()], symbolsByCoin, businessTypes: types.map((t) => t.business_type) };
}
