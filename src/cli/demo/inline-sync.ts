// The demo without Redis: what the worker's scheduled jobs do for one account (bills, then the
// incremental verify; snapshots), run in this process, one pass every interval.
import type { AccountConfig } from "../../config/accounts.ts";
import type { Config } from "../../config/index.ts";
import { exchangeClientFromConfig, localWeightGate } from "../../exchange/client-from-config.ts";
import type { Logger } from "../../log/logger.ts";
import type { Db } from "../../store/prisma.ts";
import { syncAccountBills } from "../../streams/bills/index.ts";
import { syncAccountSnapshots } from "../../streams/snapshots/index.ts";
import { verifyIncrementally } from "../../verify/incremental.ts";

export interface InlineSync {
  /** Runs one more pass after the one under way (so bills made until now are in), then stops. */
  finish(): Promise<void>;
  /** Stops at the next page; committed progress is kept. */
  stop(): Promise<void>;
}

export function startInlineSync(o: { config: Config; logger: Logger; db: Db; account: AccountConfig }): InlineSync {
  const { config, db, account } = o;
  const logger = o.logger.child({ account: account.name });
  const client = exchangeClientFromConfig(config, {
    credentials: account.credentials,
    gate: localWeightGate(config),
    logger,
  });
  const stopped = new AbortController();
  let lastPass = false;
  let wake = () => {};

  const pass = async (snapshotsDue: boolean) => {
    const signal = stopped.signal;
    await syncAccountBills({
      db,
      client,
      logger,
      accountName: account.name,
      backfillFromMs: account.backfillFromMs,
      lookbackMs: config.lookbackMs,
      exchangeLimits: config.exchange.limits,
      source: account.billsSource,
      signal,
    });
    await verifyIncrementally(db, {
      account: account.name,
      coinNames: config.coinNames,
      lookbackMs: config.lookbackMs,
    });
    if (snapshotsDue && account.coinIds.length > 0) {
      await syncAccountSnapshots({
        db,
        client,
        logger,
        accountName: account.name,
        coinIds: account.coinIds,
        coinNames: config.coinNames,
        retentionDays: config.snapshotRetentionDays,
        signal,
      });
    }
  };

  const loop = (async () => {
    let nextSnapshotAt = 0;
    while (!stopped.signal.aborted) {
      const final = lastPass;
      try {
        const snapshotsDue = Date.now() >= nextSnapshotAt;
        await pass(snapshotsDue);
        if (snapshotsDue) nextSnapshotAt = Date.now() + config.worker.snapshotIntervalMs;
      } catch (err) {
        if (stopped.signal.aborted) break;
        // As a failed job in the worker: logged, and the next pass starts again from the cursor.
        logger.error({ err }, "inline sync pass failed; the next pass retries from the cursor");
      }
      if (final) break;
      if (lastPass) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, config.worker.billsIntervalMs);
      });
    }
  })();

  // Finished or stopped, then stopped again by the demo's clean-up: the client closes once.
  let ended: Promise<void> | undefined;
  const end = () =>
    (ended ??= (async () => {
      await loop;
      await client.close();
    })());
  return {
    finish: () => {
      lastPass = true;
      wake();
      return end();
    },
    stop: () => {
      stopped.abort(new Error("demo stopped"));
      wake();
      return end();
    },
  };
}
