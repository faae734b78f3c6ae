import type { Command } from "commander";
import { requireDatabaseUrl } from "../../config/index.ts";
import type { BillsSyncSummary } from "../../streams/bills/index.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { createRuntime } from "../runtime.ts";

export function registerSync(program: Command): void {
  program
    .command("sync")
    .description("sync the configured account's bills from the stored cursor (or BACKFILL_FROM) up to now")
    .option("--once", "run one pass inline and exit (no Redis needed)")
    .option("--json", "print the summary as JSON")
    .action(async (opts: { once?: boolean; json?: boolean }) => {
      if (!opts.once) throw new CliExit(EXIT.usage, "sync needs --once (one inline pass); scheduled, continuous syncing is the job of `ledger-sync worker`");
      const { config, logger, signal } = createRuntime();
      const databaseUrl = requireDatabaseUrl(config);
      const [{ createDb }, { syncAccountBills }, { createExchangeClient }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../streams/bills/index.ts"),
        import("../exchange-client.ts"),
      ]);
      const client = createExchangeClient(config, logger);
      const db = createDb(databaseUrl);
      try {
        const summary = await syncAccountBills({
          db,
          client,
          logger,
          accountName: config.accountName,
          backfillFromMs: config.backfillFromMs,
          lookbackMs: config.lookbackMs,
          signal,
        });
        process.stdout.write(opts.json ? `${JSON.stringify({ account: config.accountName, bills: summary })}\n` : formatSummary(config.accountName, summary));
        if (summary.unverifiedMilliseconds.length > 0) {
          const list = summary.unverifiedMilliseconds.map((ms) => new Date(ms).toISOString()).join(", ");
          throw new CliExit(EXIT.unverified, `completeness not provable at ${list}: more same-millisecond bills of one type and coin than a page holds; fetched by every known symbol`);
        }
        if (summary.quarantined > 0) {
          throw new CliExit(EXIT.quarantined, `${summary.quarantined} bill(s) quarantined instead of stored: see the quarantine table`);
        }
      } finally {
        await Promise.allSettled([client.close(), db.$disconnect()]);
      }
    });
}

function formatSummary(account: string, s: BillsSyncSummary): string {
  const lines = [
    `bills for account "${account}": ${new Date(s.fromMs).toISOString()} .. ${new Date(s.toMs).toISOString()}`,
    `  fetched ${s.billsFetched} in ${s.windows} windows (${s.requests} requests${s.splitMilliseconds ? `, ${s.splitMilliseconds} same-millisecond splits` : ""})`,
    `  new ${s.inserted}, revised ${s.revised}, quarantined ${s.quarantined}`,
  ];
  if (s.unverifiedMilliseconds.length) lines.push(`  NOT PROVEN COMPLETE at: ${s.unverifiedMilliseconds.map((ms) => new Date(ms).toISOString()).join(", ")}`);
  if (s.unknownBusinessTypes.length) lines.push(`  businessType values not in the spec (stored as sent): ${s.unknownBusinessTypes.join(", ")}`);
  return `${lines.join("\n")}\n`;
}
