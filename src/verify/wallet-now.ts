// verify's reading of the balance now, when this process has the account's key: one request to
// GET /capi/v3/account/balance. An exchange that does not serve it (404) is remembered in
// exchange_profiles and not asked again; a reply that cannot be read exactly fails verify, named.
import { fetchBalances } from "../exchange/balance-endpoint.ts";
import type { ExchangeClient } from "../exchange/http-client.ts";
import { readV3BalanceServed, recordV3BalanceServed } from "../store/exchange-profiles.ts";
import type { Db } from "../store/prisma.ts";
import type { WalletReading } from "../store/wallet-checks.ts";
import { v3BalanceReadings } from "../streams/snapshots/wallet-readings.ts";

export async function v3BalanceNow(db: Db, client: ExchangeClient, account: string): Promise<WalletReading[]> {
  if ((await readV3BalanceServed(db, account)) === false) return [];
  const observedAtMs = Date.now();
  const r = await fetchBalances(client);
  if (!r.ok) {
    if (!r.notServed) throw new Error(`account "${account}": the v3 balance reply is unusable: ${r.reason}`);
    await recordV3BalanceServed(db, account, false);
    return [];
  }
  if ((await readV3BalanceServed(db, account)) !== true) await recordV3BalanceServed(db, account, true);
  return v3BalanceReadings(account, observedAtMs, r.balances);
}
