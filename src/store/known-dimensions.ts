// Coins, symbols and business types already stored for an account: candidate filter values when a single
// millisecond holds more bills than one page and must be split (streams/bills-v2/millisecond-split.ts).
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
    "SELECT DISTINCT coin, symbol FROM bills WHERE account_name = $1",
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
    "SELECT DISTINCT business_type FROM bills WHERE account_name = $1",
    accountName,
  );
  return { coins: [...symbolsByCoin.keys()], symbolsByCoin, businessTypes: types.map((t) => t.business_type) };
}
