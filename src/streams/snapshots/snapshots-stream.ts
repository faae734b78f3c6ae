// The snapshots stream: for each configured coin id, fetch the account endpoint, validate, and
// store the snapshot in one transaction. A response that fails validation writes nothing of
// itself: its exact text goes to quarantine with the reason, and the other coins carry on.
import type { Logger } from "pino";
import type { AccountSnapshotFetch } from "../../exchange/account-record.ts";
import type { SnapshotChanges, SnapshotWrite } from "../../store/snapshot-write.ts";
import { toSnapshotWrite } from "./mapping.ts";

export const SNAPSHOTS_STREAM = "snapshots";

export interface SnapshotsDeps {
  /** `unstored`: records the response carried only in part, left as they were in the tables. */
  fetchAccount: (coinId: string) => Promise<AccountSnapshotFetch & { unstored?: string[] }>;
  commitSnapshot: (write: SnapshotWrite) => Promise<SnapshotChanges>;
  quarantine: (item: { reason: string; rawText: string; context: Record<string, unknown> }) => Promise<void>;
  /** Prunes history older than the retention (SNAPSHOT_HISTORY_RETENTION_DAYS); absent: keep forever. */
  pruneHistory?: () => Promise<number>;
  logger: Logger;
  now?: () => Date;
  signal?: AbortSignal;
}

export type CoinSnapshotResult =
  | { coinId: string; outcome: "stored"; version: string; changes: SnapshotChanges; positionsOpen: number | null }
  | { coinId: string; outcome: "quarantined"; reason: string };

export interface SnapshotsSummary {
  coins: CoinSnapshotResult[];
  quarantined: number;
  prunedHistoryRows: number;
}

export async function syncSnapshots(
  accountName: string,
  coinIds: string[],
  deps: SnapshotsDeps,
): Promise<SnapshotsSummary> {
  const now = deps.now ?? (() => new Date());
  const coins: CoinSnapshotResult[] = [];
  for (const coinId of coinIds) {
    deps.signal?.throwIfAborted();
    const logger = deps.logger.child({ stream: SNAPSHOTS_STREAM, coinId });
    // Taken before the request: the record is at least as new as this instant.
    const takenAt = now();
    const fetched = await deps.fetchAccount(coinId);
    if (!fetched.ok) {
      await deps.quarantine({
        reason: fetched.reason,
        rawText: fetched.rawText,
        context: { coinId, takenAt: takenAt.toISOString() },
      });
      logger.warn(
        { reason: fetched.reason },
        "account snapshot failed validation: nothing written, response quarantined",
      );
      coins.push({ coinId, outcome: "quarantined", reason: fetched.reason });
      continue;
    }
    if (fetched.unstored)
      logger.warn(
        { unstored: fetched.unstored },
        "account snapshot carries some records only in part: those are not stored and keep their last values",
      );
    const write = toSnapshotWrite(accountName, coinId, takenAt, fetched.response, fetched.raw);
    const changes = await deps.commitSnapshot(write);
    logger.info({ version: write.version, changes }, "account snapshot stored");
    coins.push({
      coinId,
      outcome: "stored",
      version: write.version,
      changes,
      // null: the response carried no positions.
      positionsOpen: write.positions?.length ?? null,
    });
  }
  const prunedHistoryRows = deps.pruneHistory ? await deps.pruneHistory() : 0;
  return { coins, quarantined: coins.filter((c) => c.outcome === "quarantined").length, prunedHistoryRows };
}
