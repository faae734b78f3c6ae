import type { Command } from "commander";
import { CliExit, EXIT } from "../exit-codes.ts";
import { requireDatabaseUrl } from "../../config/index.ts";
import type { RunLockGroup } from "../../store/run-lease.ts";
import { withAccountRunLock } from "../account-run-lock.ts";
import { withSyncContext } from "../sync-context.ts";
import { assertComplete, formatRunSummary, type RunSummary } from "../sync-summary.ts";

export function registerSync(program: Command): void {
  program
    .command("sync")
    .description(
      "sync the configured account: bills from the stored cursor (or BACKFILL_FROM) up to now, " +
        "then a snapshot of every coin in SYNC_COIN_IDS",
    )
    .option("--once", "run one pass inline and exit (no Redis needed)")
    .option("--account <name>", "a configured or registered account (default: the plain variables' ACCOUNT_NAME)")
    .option("--json", "print the summary as JSON")
    .option(
      "--wait",
      `if another process is writing this account, wait for it (default: exit at once with code ${EXIT.busy})`,
    )
    .action(async (opts: { once?: boolean; json?: boolean; wait?: boolean; account?: string }) => {
      if (!opts.once)
        throw new CliExit(
          EXIT.usage,
          "sync needs --once (one inline pass); scheduled, continuous syncing is the job of `ledger-sync worker`",
        );
      const summary = await withSyncContext(async ({ config, logger, signal: stop, db, client, account }) => {
        const groups: RunLockGroup[] = account.coinIds.length > 0 ? ["bills", "snapshots"] : ["bills"];
        const lock = {
          databaseUrl: requireDatabaseUrl(config),
          account: account.name,
          groups,
          leaseMs: config.database.runLeaseMs,
          what: "sync --once",
          wait: opts.wait === true,
          logger,
          signal: stop,
        };
        return withAccountRunLock(lock, async (signal, fences) => {
          const [{ syncAccountBills }, { syncAccountSnapshots }] = await Promise.all([
            import("../../streams/bills/index.ts"),
            import("../../streams/snapshots/index.ts"),
          ]);
          const run: RunSummary = { account: account.name };
          run.bills = await syncAccountBills({
            db,
            client,
            logger,
            accountName: account.name,
            backfillFromMs: account.backfillFromMs,
            lookbackMs: config.lookbackMs,
            exchangeLimits: config.exchange.limits,
            source: account.billsSource,
            ...(fences.bills ? { fence: fences.bills } : {}),
            signal,
          });
          if (account.coinIds.length > 0) {
            run.snapshots = await syncAccountSnapshots({
              db,
              client,
              logger,
              accountName: account.name,
              coinIds: account.coinIds,
              coinNames: config.coinNames,
              retentionDays: config.snapshotRetentionDays,
              ...(fences.snapshots ? { fence: fences.snapshots } : {}),
              signal,
            });
          }
          return run;
        });
      }, opts);
      process.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : formatRunSummary(summary));
      assertComplete(summary);
    });
}
