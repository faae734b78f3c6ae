// Wires the snapshots stream to the exchange client and the store for one account.
import type { Logger } from "pino";
import { fetchAccount } from "../../exchange/account-endpoint.ts";
import type { ExchangeClient } from "../../exchange/http-client.ts";
import type { Db } from "../../store/prisma.ts";
import { quarantineRecords } from "../../store/quarantine.ts";
import { pruneSnapshotHistory } from "../../store/snapshot-retention.ts";
import { commitSnapshot } from "../../store/snapshot-write.ts";
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
  return syncSnapshots(o.accountName, o.coinIds, {
    fetchAccount: (coinId) => fetchAccount(o.client, coinId, o.signal),
    commitSnapshot: (write) => commitSnapshot(o.db, write),
    quarantine: async (item) => {
      await quarantineRecords(o.db, o.accountName, SNAPSHOTS_STREAM, [item], item.context);
    },
    ...(retentionDays === undefined ? {} : { pruneHistory: () => pruneSnapshotHistory(o.db, o.accountName, retentionDays) }),
    logger: o.logger.child({ account: o.accountName }),
    signal: o.signal,
  });
}
