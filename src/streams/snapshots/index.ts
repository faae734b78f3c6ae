// Wires the snapshots stream to the exchange client and the store for one account.
import type { Logger } from "pino";
import { fetchAccount } from "../../exchange/account-endpoint.ts";
import { fetchPublicAccount, type CoinNames } from "../../exchange/account-public.ts";
import type { ExchangeClient } from "../../exchange/http-client.ts";
import { readAccountEndpoint, recordAccountEndpoint } from "../../store/exchange-profiles.ts";
import type { Db } from "../../store/prisma.ts";
import { quarantineRecords } from "../../store/quarantine.ts";
import { pruneSnapshotHistory } from "../../store/snapshot-retention.ts";
import type { RunFence } from "../../store/run-lease.ts";
import { commitSnapshot } from "../../store/snapshot-write.ts";
import { recordRun } from "../../store/sync-runs.ts";
import { AccountForms } from "./account-forms.ts";
import { SNAPSHOTS_STREAM, syncSnapshots, type SnapshotsSummary } from "./snapshots-stream.ts";
import { recordSnapshotReadings } from "./wallet-readings.ts";

export { SNAPSHOTS_STREAM, type CoinSnapshotResult, type SnapshotsSummary } from "./snapshots-stream.ts";
export { DEFAULT_FEE_CONTRACT } from "./mapping.ts";

export interface SnapshotsAccountSync {
  db: Db;
  client: ExchangeClient;
  logger: Logger;
  accountName: string;
  coinIds: string[];
  /** COIN_NAMES (coin id -> name): the public form of the account read asks by coin name. */
  coinNames?: CoinNames;
  retentionDays: number | undefined;
  signal?: AbortSignal;
  /** The run's lease of the account's snapshots: every write checks it (store/run-lease.ts). */
  fence?: RunFence;
}

export function syncAccountSnapshots(o: SnapshotsAccountSync): Promise<SnapshotsSummary> {
  const retentionDays = o.retentionDays;
  const coinNames = o.coinNames ?? {};
  const logger = o.logger.child({ account: o.accountName });
  const coinName = (coinId: string): string => {
    const name = coinNames[coinId];
    if (name === undefined)
      throw new Error(
        `coin id ${coinId} has no name: the exchange serves the account read only as ` +
          `/capi/v2/account/getAccount?coin=<name>; set COIN_NAMES (e.g. ${coinId}=USDT)`,
      );
    return name;
  };
  return recordRun(
    o.db,
    { accountName: o.accountName, stream: SNAPSHOTS_STREAM },
    async () => {
      const sinceMs = Date.now();
      const forms = new AccountForms({
        known: await readAccountEndpoint(o.db, o.accountName),
        fetch: {
          seed: (coinId) => fetchAccount(o.client, coinId, o.signal),
          public: (coinId) => fetchPublicAccount(o.client, coinName(coinId), coinNames, o.signal),
        },
        record: (form) => recordAccountEndpoint(o.db, o.accountName, form),
        logger,
      });
      const summary = await syncSnapshots(o.accountName, o.coinIds, {
        fetchAccount: (coinId) => forms.fetch(coinId),
        commitSnapshot: (write) => commitSnapshot(o.db, o.fence ? { ...write, fence: o.fence } : write),
        quarantine: async (item) => {
          await quarantineRecords(o.db, o.accountName, SNAPSHOTS_STREAM, [item], item.context);
        },
        ...(retentionDays === undefined
          ? {}
          : { pruneHistory: () => pruneSnapshotHistory(o.db, o.accountName, retentionDays) }),
        logger,
        signal: o.signal,
      });
      // What the exchange reported, for the wallet check to compare with the bills (issue 26).
      await recordSnapshotReadings(o.db, { account: o.accountName, coinIds: o.coinIds, coinNames, sinceMs });
      return summary;
    },
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
