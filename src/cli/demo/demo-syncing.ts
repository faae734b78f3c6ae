// The demo's scheduled syncing, one way or the other: the worker through the queue when there is a
// Redis, else the worker's passes inline in this process. Either backfills the history first.
import type { AccountConfig } from "../../config/accounts.ts";
import type { Config } from "../../config/index.ts";
import { startWorker } from "../../jobs/worker.ts";
import type { Logger } from "../../log/logger.ts";
import type { Db } from "../../store/prisma.ts";
import { runQueued } from "../backfill-queued.ts";
import { runInline, type BackfillOutcome, type BackfillPlan } from "../backfill-runner.ts";
import { startInlineSync } from "./inline-sync.ts";

export interface DemoSyncing {
  backfill: BackfillOutcome;
  /** Lets the syncing take the newest bills, then stops it. */
  finish(): Promise<void>;
  /** Stops it now (committed progress is kept); safe after finish(). */
  stop(why: string): Promise<void>;
}

interface Parts {
  config: Config;
  logger: Logger;
  db: Db;
  databaseUrl: string;
  redisUrl: string | undefined;
  account: AccountConfig;
  plans: BackfillPlan[];
  out: (line: string) => void;
}

export async function startDemoSyncing(p: Parts): Promise<DemoSyncing> {
  if (!p.redisUrl) {
    const backfill = await runInline({ ...p, wait: true });
    const inline = startInlineSync(p);
    return { backfill, finish: () => inline.finish(), stop: () => inline.stop() };
  }
  const worker = await startWorker(p.config, p.logger);
  p.out(`worker running: metrics ${worker.metricsUrl}/metrics, health ${worker.metricsUrl}/healthz`);
  try {
    const backfill = await runQueued({ ...p, redisUrl: p.redisUrl });
    return {
      backfill,
      // One more scheduled bills run (the interval plus a margin) so live bills are in.
      finish: async () => {
        await new Promise((resolve) => setTimeout(resolve, p.config.worker.billsIntervalMs + 1500));
        await worker.stop("demo finished");
      },
      stop: (why) => worker.stop(why),
    };
  } catch (err) {
    await worker.stop("demo failed");
    throw err;
  }
}
