// SNAPSHOT_HISTORY_RETENTION_DAYS: prunes snapshot history older than the retention. Never current
// rows, never bills, never the newest version of anything. A version is removed only when it
// stopped being valid before the cutoff, i.e. the version that replaced it is itself older than the
// cutoff: "as of" questions about any instant inside the retention keep their answer.
//
// Never the evidence of a close either: the collateral a close's roll-forward compared stays, so the
// closed period's "closing = reported" can be recomputed from the rows it was reconciled against
// (superseded closes too: they are on record). And nothing at all while the account is under a
// legal hold (legal-holds.ts).
import { lockActiveHolds } from "./legal-holds.ts";
import type { Db } from "./prisma.ts";

// The collateral snapshots the account's closes compared, per coin id and instant: the roll-forward's
// reported snapshot of each coin, and the statement's collateral comparisons its figures keep (closes
// made before the roll-forward have only those). Computed once per statement (MATERIALIZED).
const COMPARED = `compared AS MATERIALIZED (
  SELECT DISTINCT s->>'coinId' AS coin_id, (s->>'observedAt')::timestamptz AS at
  FROM period_closes c,
       LATERAL (SELECT jsonb_path_query(c.rollforward, '$.coins.*.reported')
                UNION ALL
                SELECT jsonb_path_query(c.figures, '$.coins[*].collateral[*]')) r(s)
  WHERE c.account_name = $1 AND s->>'coinId' IS NOT NULL AND s->>'observedAt' IS NOT NULL
)`;

// A collateral record (its key) as of a compared instant is its latest version at or before it
// (statement/collateral-near.ts): that version is kept, for every record of the coin id, whatever
// its age. Versions tied at that instant all stay.
const NOT_COMPARED = `NOT EXISTS (
     SELECT 1 FROM compared c
     WHERE c.coin_id = h.coin_id AND c.at >= h.observed_at
       AND NOT EXISTS (
         SELECT 1 FROM collateral_history m
         WHERE m.account_name = h.account_name AND m.coin_id = h.coin_id AND m.margin_mode = h.margin_mode
           AND m.cross_contract_id = h.cross_contract_id AND m.cross_symbol = h.cross_symbol
           AND m.isolated_position_id = h.isolated_position_id
           AND m.observed_at > h.observed_at AND m.observed_at <= c.at))`;

const STATEMENTS = [
  // Settings versions that ended before the cutoff (current ones have valid_to NULL).
  ...["fee_settings", "mode_settings", "leverage_settings"].map(
    (t) => `DELETE FROM ${t} WHERE account_name = $1 AND valid_to < $2`,
  ),
  `WITH ${COMPARED}
   DELETE FROM collateral_history h WHERE h.account_name = $1 AND h.observed_at < $2 AND EXISTS (
     SELECT 1 FROM collateral_history n
     WHERE n.account_name = h.account_name AND n.coin_id = h.coin_id AND n.margin_mode = h.margin_mode
       AND n.cross_contract_id = h.cross_contract_id AND n.cross_symbol = h.cross_symbol
       AND n.isolated_position_id = h.isolated_position_id AND n.observed_at > h.observed_at AND n.observed_at < $2)
     AND ${NOT_COMPARED}`,
  `DELETE FROM position_history h WHERE h.account_name = $1 AND h.observed_at < $2 AND EXISTS (
     SELECT 1 FROM position_history n
     WHERE n.account_name = h.account_name AND n.position_id = h.position_id
       AND n.observed_at > h.observed_at AND n.observed_at < $2)`,
  `DELETE FROM account_snapshots h WHERE h.account_name = $1 AND h.taken_at < $2 AND EXISTS (
     SELECT 1 FROM account_snapshots n
     WHERE n.account_name = h.account_name AND n.coin_id = h.coin_id
       AND n.taken_at > h.taken_at AND n.taken_at < $2)`,
];

/**
 * Deletes history older than `retentionDays`; returns the number of rows removed: 0, deleting nothing,
 * while the account is under a legal hold.
 */
export async function pruneSnapshotHistory(
  db: Db,
  accountName: string,
  retentionDays: number,
  now = new Date(),
): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  return db.$transaction(async (tx) => {
    // Under the account's hold lock to the commit: a hold placed meanwhile waits for this prune.
    if ((await lockActiveHolds(tx, accountName)).length > 0) return 0;
    let removed = 0;
    for (const sql of STATEMENTS) removed += await tx.$executeRawUnsafe(sql, accountName, cutoff);
    return removed;
  });
}
