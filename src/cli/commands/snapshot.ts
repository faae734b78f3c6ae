import type { Command } from "commander";
import { ConfigError, requireDatabaseUrl } from "../../config/index.ts";
import { withAccountRunLock } from "../account-run-lock.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { withSyncContext } from "../sync-context.ts";
import { assertComplete, formatRunSummary } from "../sync-summary.ts";

export function registerSnapshot(program: Command): void {
  program
    .command("snapshot")
    .description("snapshot account settings, collateral and positions for every coin in SYNC_COIN_IDS (no bills)")
    .option("--once", "run one pass inline and exit (no Redis needed)")
    .option("--account <name>", "a configured or registered account (default: the plain variables' ACCOUNT_NAME)")
    .option("--json", "print the summary as JSON")
    .option(
      "--wait",
      "if another process is writing this account's snapshots, wait for it " +
        `(default: exit at once with code ${EXIT.busy})`,
    )
    .action(async (opts: { once?: boolean; json?: boolean; wait?: boolean; account?: string }) => {
      if (!opts.once)
        throw new CliExit(
          EXIT.usage,
          "snapshot needs --once (one inline pass); scheduled snapshots are the job of `ledger-sync worker`",
        );
      const summary = await withSyncContext(async ({ config, logger, signal: stop, db, client, account }) => {
        if (account.coinIds.length === 0)
          throw new ConfigError(
            account.origin === "env"
              ? "SYNC_COIN_IDS is empty: list the coin ids to snapshot, e.g. SYNC_COIN_IDS=2"
              : `account "${account.name}" has no coin ids to snapshot`,
          );
        const lock = {
          databaseUrl: requireDatabaseUrl(config),
          account: account.name,
          groups: ["snapshots" as const],
          leaseMs: config.database.runLeaseMs,
          what: "snapshot",
          wait: opts.wait === true,
          logger,
          signal: stop,
        };
        return withAccountRunLock(lock, async (signal, fences) => {
          const { syncAccountSnapshots } = await import("../../streams/snapshots/index.ts");
          const snapshots = await syncAccountSnapshots({
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
          return { account: account.name, snapshots };
        });
      }, opts);
      process.stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : formatRunSummary(summary));
      assertComplete(summary);
    });
}
