// The wallet check's readings (issue 26): what the exchange reported a coin's balance to be, from the
// collateral of the snapshot just taken (no extra request) or a v3 balance reply. Filed in
// wallet_readings (store/wallet-checks.ts); verify/wallet.ts compares them with the bills.
import type { Db } from "../../store/prisma.ts";
import { collateralFigures, recordReadings, type WalletReading } from "../../store/wallet-checks.ts";

export interface CollateralReadingOptions {
  account: string;
  coinIds: string[];
  /** COIN_NAMES: coin id -> the coin name bills carry. */
  coinNames: Record<string, string>;
  /** When the snapshot run began: the records it saw carry last_seen_at >= this. */
  sinceMs: number;
}

/**
 * One reading per named coin from the snapshot taken at `takenAtMs`: each main record (not an
 * isolated position's) and all records together, since the spec does not say which the bills'
 * balance follows. A coin id COIN_NAMES does not name gives no reading (verify says so).
 */
export async function collateralReadings(db: Db, o: CollateralReadingOptions): Promise<WalletReading[]> {
  const named = o.coinIds.filter((id) => o.coinNames[id] !== undefined);
  if (named.length === 0) return [];
  const rows = await db.$queryRawUnsafe<
    { coin_id: string; key: string; main: boolean; amount: string; seen_ms: string }[]
  >(
    `SELECT coin_id,
            margin_mode || '/' || cross_contract_id || '/' || cross_symbol || '/' || isolated_position_id AS key,
            isolated_position_id = '0' AS main, amount::text AS amount,
            (extract(epoch FROM last_seen_at) * 1000)::bigint::text AS seen_ms
     FROM collateral_current
     WHERE account_name = $1 AND coin_id = ANY($2::text[])
       AND last_seen_at >= timestamptz 'epoch' + $3::bigint * interval '1 millisecond'
     ORDER BY coin_id, key`,
    o.account,
    named,
    String(o.sinceMs),
  );
  const readings: WalletReading[] = [];
  for (const coinId of named) {
    const records = rows.filter((r) => r.coin_id === coinId);
    if (records.length === 0) continue;
    const figures = collateralFigures(records);
    readings.push({
      account: o.account,
      coin: o.coinNames[coinId]!,
      source: "collateral",
      // The snapshot's own instant (taken just before its request), the same for all its records.
      observedAtMs: Math.max(...records.map((r) => Number(r.seen_ms))),
      figures,
    });
  }
  return readings;
}

/** Files the readings of the snapshot run that began at `sinceMs` (the wallet check's source). */
export async function recordSnapshotReadings(db: Db, o: CollateralReadingOptions): Promise<number> {
  const readings = await collateralReadings(db, o);
  await recordReadings(db, readings);
  return readings.length;
}

/** One reading per asset of a v3 balance reply (`balance`: the asset's wallet balance). */
export function v3BalanceReadings(
  account: string,
  observedAtMs: number,
  balances: readonly { asset: string; balance: string }[],
): WalletReading[] {
  return balances.map((b) => ({
    account,
    coin: b.asset,
    source: "v3-balance" as const,
    observedAtMs,
    figures: [{ label: "v3 balance", amount: b.balance }],
  }));
}
