import { InvalidArgumentError, type Command } from "commander";
import { loadConfig, parseInstant, requireDatabaseUrl, requireRedisUrl } from "../../config/index.ts";
import { createLogger } from "../../log/logger.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { assertProven } from "../sync-summary.ts";

const instant = (flag: string) => (v: string) => {
  const ms = parseInstant(v);
  if (ms === undefined)
    throw new InvalidArgumentError(`${flag} must be an ISO date (2026-01-31) or epoch milliseconds`);
  return ms;
};
const hours = (v: string) => {
  if (!/^[0-9]+$/.test(v) || Number(v) < 1 || Number(v) > 24 * 366)
    throw new InvalidArgumentError("--window-hours must be a whole number of hours from 1 to 8784");
  return Number(v);
};

interface Options {
  from: number;
  to?: number;
  account?: string;
  windowHours: number;
  inline?: boolean;
  wait?: boolean;
}

export function registerBackfill(program: Command): void {
  program
    .command("backfill")
    .description(
      "fetch a range of bill history in resumable windows: queued for the workers (needs REDIS_URL), " +
        "or --inline in this process",
    )
    .requiredOption("--from <date|ms>", "start of the range (ISO date, UTC, or epoch ms)", instant("--from"))
    .option("--to <date|ms>", "end of the range (default: now)", instant("--to"))
    .option("--account <name>", "only this account (default: every configured account)")
    .option("--window-hours <n>", "hours per window job", hours, 24)
    .option("--inline", "run the windows here, one after another, instead of queueing them")
    .option(
      "--wait",
      "with --inline: if another process is writing an account's bills, wait for it " +
        `(default: exit at once with code ${EXIT.busy})`,
    )
    .action(async (o: Options) => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel, { format: config.logFormat });
      const toMs = o.to ?? Date.now();
      if (toMs < o.from) throw new CliExit(EXIT.usage, "--to is before --from");
      const { commandAccounts } = await import("../command-accounts.ts");
      let accounts = await commandAccounts(config);
      if (o.account) {
        accounts = accounts.filter((a) => a.name === o.account);
        if (accounts.length === 0) throw new CliExit(EXIT.usage, `--account ${o.account} is not a configured account`);
      }
      const databaseUrl = requireDatabaseUrl(config);
      const { planBackfill } = await import("../../jobs/backfill-plan.ts");
      const plans = accounts.map((a) => ({
        account: a,
        windows: planBackfill(a.name, o.from, toMs, o.windowHours * 3_600_000),
      }));
      // Each way loads only its own modules: the inline run opens no Redis connection or queue.
      const ok = o.inline
        ? await (
            await import("../backfill-runner.ts")
          ).runInline({
            config,
            logger,
            databaseUrl,
            plans,
            wait: o.wait === true,
          })
        : await (
            await import("../backfill-queued.ts")
          ).runQueued({
            config,
            logger,
            databaseUrl,
            redisUrl: requireRedisUrl(config),
            plans,
          });
      if (!ok.complete) throw new CliExit(EXIT.failed, ok.reason);
      process.stdout.write(`backfill complete: ${ok.windows} windows, ${ok.bills} bills in range\n`);
      for (const b of ok.beyondHorizon) {
        process.stdout.write(
          `  account ${b.account}: ${new Date(b.fromMs).toISOString()} .. ${new Date(b.horizonMs).toISOString()} ` +
            "lies beyond the exchange's history horizon: those bills are not retrievable\n",
        );
      }
      assertProven(ok.unverifiedMilliseconds);
    });
}
