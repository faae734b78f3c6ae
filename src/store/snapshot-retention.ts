// SNAPSHOT_HISTORY_RETENTION_DAYS: prunes snapshot history older than the retention. Never current
// rows, never bills, never the newest version of anything. A version is removed only when it
// stopped being valid before the cutoff, i.e. the version that replaced it is itself older than the
// cutoff: "as of" questions about any instant inside the retention keep their answer.
import type { Db } from "./prisma.ts";

const STATEMENTS = [
  // Settings versions that ended before the cutoff (current ones have valid_to NULL).
  ...["fee_settings", "mode_settings", "leverage_settings"].map(
    (t) => `DELETE FROM ${t} WHERE account_name = $1 AND valid_to < $2`,
  ),
  `DELETE FROM collateral_history h WHERE h.account_name = $1 AND h.observed_at < $2 AND EXISTS (
     SELECT 1 FROM collateral_history n
     WHERE n.account_name = h.account_name AND n.coin_id = h.coin_id AND n.margin_mode = h.margin_mode
       AND n.cross_contract_id = h.cross_contract_id AND n.cross_symbol = h.cross_symbol
       AND n.isolated_position_id = h.isolated_position_id AND n.observed_at > h.observed_at AND n.observed_at < $2)`,
  `DELETE FROM position_history h WHERE h.account_name = $1 AND h.observed_at < $2 AND EXISTS (
     SELECT 1 FROM position_history n
     WHERE n.account_name = h.account_name AND n.position_id = h.position_id
       AND n.observed_at > h.observed_at AND n.observed_at < $2)`,
  `DELETE FROM account_snapshots h WHERE h.account_name = $1 AND h.taken_at < $2 AND EXISTS (
     SELECT 1 FROM account_snapshots n
     WHERE n.account_name = h.account_name AND n.coin_id = h.coin_id
       AND n.taken_at > h.taken_at AND n.taken_at < $2)`,
];

/** Deletes history older than `retentionDays`; returns the number of rows removed. */
export async function pruneSnapshotHistory(
  db: Db,
  accountName: string,
  retentionDays: number,
  now = new Date(),
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  return db.$transaction(async (tx) => {
    let removed = 0;
    for (const sql of STATEMENTS) removed += await tx.$executeRawUnsafe(sql, accountName, cutoff);
    return removed;
  });
}
