// Wires the snapshots stream to the exchange client and the store for one account.
import type { Logger } from "pino";
import { fetchAccount } from "../../exchange/account-endpoint.ts";
import type { ExchangeClient } from "../../exchange/http-client.ts";
import type { Db } from "../../store/prisma.ts";
import { quarantineRecords } from "../../store/quarantine.ts";
import { pruneSnapshotHistory } from "../../store/snapshot-retention.ts";
import { commitSnapshot } from "../../store/snapshot-write.ts";
import { recordRun } from "../../store/sync-runs.ts";
import { SNAPSHOTS_STREAM, syncSnapshots, type SnapshotsSummary } from "./snapshots-stream.ts";

export { SNAPSHOTS_STREAM, type CoinSnapshotResult, type SnapshotsSummary } from "./snapshots-stream.ts";
export { DEFAULT_FEE_CONTRACT } from "./mapping.ts";

export interface SnapshotsAccountSync {
  db: Db;
  client: ExchangeClient;
  logger: Logger;
  accountName: string;
  coinIds: string[];
  retentionDays: number | undefined;
  signal?: AbortSignal;
}

export function syncAccountSnapshots(o: SnapshotsAccountSync): Promise<SnapshotsSummary> {
  const retentionDays = o.retentionDays;
  return recordRun(
    o.db,
    { accountName: o.accountName, stream: SNAPSHOTS_STREAM },
    () =>
      syncSnapshots(o.accountName, o.coinIds, {
        fetchAccount: (coinId) => fetchAccount(o.client, coinId, o.signal),
        commitSnapshot: (write) => commitSnapshot(o.db, write),
        quarantine: async (item) => {
          await quarantineRecords(o.db, o.accountName, SNAPSHOTS_STREAM, [item], item.context);
        },
        ...(retentionDays === undefined
          ? {}
          : { pruneHistory: () => pruneSnapshotHistory(o.db, o.accountName, retentionDays) }),
        logger: o.logger.child({ account: o.accountName }),
        signal: o.signal,
      }),
    (s) => {
      const stored = s.coins.flatMap((c) => (c.outcome === "stored" ? [c.changes] : []));
      const sum = (f: (c: (typeof stored)[number]) => number) => stored.reduce((n, c) => n + f(c), 0);
      return {
        pages: s.coins.length,
        recordsFetched: stored.length,
        recordsNew: sum((c) => c.positions.opened + c.positions.reopened),
        recordsChanged: sum(
          (c) =>
            Number(c.accountChanged) +
            c.settingsChanged.fees +
            c.settingsChanged.modes +
            c.settingsChanged.leverages +
            c.collateralChanged +
            c.positions.changed +
            c.positions.closed,
        ),
        quarantined: s.quarantined,
        detail: {
          coins: s.coins.map((c) => ({ coinId: c.coinId, outcome: c.outcome })),
          prunedHistoryRows: s.prunedHistoryRows,
        },
      };
    },
    () => o.signal?.aborted === true,
  );
}
