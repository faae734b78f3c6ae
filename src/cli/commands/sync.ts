import type { Command } from "commander";
import { CliExit, EXIT } from "../exit-codes.ts";
import { withSyncContext } from "../sync-context.ts";
import { assertComplete, formatRunSummary, type RunSummary } from "../sync-summary.ts";

export function registerSync(program: Command): void {
  program
    .command("sync")
    .description("sync the configured account: bills from the stored cursor (or BACKFILL_FROM) up to now, then a snapshot of every coin in SYNC_COIN_IDS")
    .option("--once", "run one pass inline and exit (no Redis needed)")
    .option("--json", "print the summary as JSON")
    .action(async (opts: { once?: boolean; json?: boolean }) => {
      if (!opts.once) throw new CliExit(EXIT.usage, "sync needs --once (one inline pass); scheduled, continuous syncing is the job of `ledger-sync worker`");
      const summary = await withSyncContext(async ({ config, logger, signal, db, client }) => {
        const [{ syncAccountBills }, { syncAccountSnapshots }] = await Promise.all([import("../../streams/bills/index.ts"), import("../../streams/snapshots/index.ts")]);
        const run: RunSummary = { account: config.accountName };
        run.bills = await syncAccountBills({ db, client, logger, accountName: config.accountName, backfillFromMs: config.backfillFromMs, lookbackMs: config.lookbackMs, exchangeLimits: config.exchange.limits, signal });
        if (config.coinIds.length > 0) {
          run.snapshots = await syncAccountSnapshots({ db, client, logger, accountName: config.accountName, coinIds: config.coinIds, retentionDays: config.snapshotRetentionDays, signal });
        }
        return run;
      });
      process.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : formatRunSummary(summary));
      assertComplete(summary);
    });
}
