import { InvalidArgumentError, type Command } from "commander";
import { loadConfig, parseInstant, requireDatabaseUrl, type Config } from "../../config/index.ts";
import type { Db } from "../../store/prisma.ts";
import type { CoinContinuity } from "../../verify/balance-continuity.ts";
import type { RepairResult } from "../../verify/repair.ts";
import { withAccountRunLock } from "../account-run-lock.ts";
import { anchorsDir } from "../anchors-dir.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import type { ExchangeReaders } from "./verify-exchange-reader.ts";
import type { Printed } from "./verify-output.ts";
import { VerifyProgress } from "./verify-progress.ts";

const instant = (flag: string) => (v: string) => {
  const ms = parseInstant(v);
  if (ms === undefined)
    throw new InvalidArgumentError(`${flag} must be an ISO date (2026-01-31) or epoch milliseconds`);
  return ms;
};

interface VerifyFlags {
  account?: string;
  from?: number;
  to?: number;
  json?: boolean;
  repair?: boolean;
  wait?: boolean;
  crossCheck?: boolean;
  exchange?: boolean;
  anchors?: string;
}

// Accounts checked at once when every account is (each on a connection of the pool): PostgreSQL
// does most of the work, so a server with cores to spare verifies a fleet that much sooner.
const PARALLEL = 4;

export function registerVerify(program: Command): void {
  program
    .command("verify")
    .description(
      "prove the stored books: balance continuity per coin (each break with the bill ids on both sides), " +
        "bill balances and sums against collateral snapshots, closed periods and their seal chain (with " +
        "--anchors, against the anchors kept outside the database), the audit trail's guard triggers, " +
        "quarantine, cursor lag; " +
        "exit 0 when all pass, 1 otherwise",
    )
    .option("--account <name>", "only this account (default: every account with bills)")
    .option("--from <date|ms>", "start of the range checked", instant("--from"))
    .option("--to <date|ms>", "end of the range checked", instant("--to"))
    .option("--json", "print JSON even on a terminal")
    .option(
      "--no-exchange",
      "never call the exchange: the wallet check compares only reported balances the stored bills already cover",
    )
    .option(
      "--anchors <dir>",
      "check every close's seal against its anchor in this directory (default: ANCHOR_DIR); a close rewritten " +
        "in the database, even consistently by its owner, fails here; every account folder in it is checked, " +
        "also of an account with no bill left",
    )
    .option("--repair", "re-fetch the windows around each continuity break from the exchange, then verify again")
    .option(
      "--wait",
      "with --repair: if another process is writing the account's bills, wait for it " +
        `(default: exit at once with code ${EXIT.busy})`,
    )
    .option(
      "--cross-check",
      "read the range (default: the last day up to the bills bookmark) through the other endpoint than " +
        "the account's BILLS_SOURCE and compare it bill by bill with what is stored; read-only; " +
        "exit 1 on any difference",
    )
    .action(async (o: VerifyFlags) => {
      const config = loadConfig();
      const anchors = anchorsDir(o.anchors, config);
      if (o.from !== undefined && o.to !== undefined && o.to < o.from)
        throw new CliExit(EXIT.usage, "--to is before --from");
      if (o.crossCheck) {
        if (o.repair)
          throw new CliExit(EXIT.usage, "--cross-check and --repair do not go together: the cross-check only reads");
        const { runCrossChecks } = await import("./cross-check-run.ts");
        return runCrossChecks(config, o);
      }
      const [
        { createDb },
        { verifyAccount },
        { accountsToVerify, accountsWithBills, inAccountOrder, unvisitedAnchorReports },
        { reportWriter },
      ] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../verify/verify-account.ts"),
        import("../../verify/verify-all.ts"),
        import("./verify-output.ts"),
      ]);
      // Accounts checked at once, each on a connection: within DATABASE_POOL_MAX, as every process.
      const parallel = o.repair ? 1 : Math.max(1, Math.min(PARALLEL, config.database.poolMax - 1));
      const db = createDb(requireDatabaseUrl(config), { poolMax: parallel });
      let readers: ExchangeReaders | undefined;
      try {
        const accounts = await accountsToVerify(db, o.account);
        const known = !o.account || accounts.length > 0;
        // The anchors of accounts nothing above visits (their bills all gone): checked, or their loss
        // would pass unseen. With --account, only that account's folder.
        const unvisited = anchors === undefined ? [] : await unvisitedAnchorReports(db, anchors, accounts, o.account);
        // An account with no bills would "pass" with nothing checked: a typo must not look like proof.
        if (!known && unvisited.length === 0) {
          throw new CliExit(
            EXIT.usage,
            `--account ${o.account}: no bills or closes are stored for that account ` +
              `(accounts with bills: ${(await accountsWithBills(db)).join(", ") || "none"})`,
          );
        }
        if (accounts.length === 0 && unvisited.length === 0) throw new CliExit(EXIT.failed, "no bills to verify");
        // The wallet check is of now: a range ending earlier (--to) has no use for the exchange.
        if (o.exchange !== false && o.to === undefined)
          readers = await (await import("./verify-exchange-reader.ts")).exchangeReaders(config, db);
        const options = (account: string) => ({
          account,
          fromMs: o.from,
          toMs: o.to,
          coinNames: config.coinNames,
          lookbackMs: config.lookbackMs,
          ...readers?.readerFor(account),
          ...(anchors !== undefined ? { anchorsDir: anchors } : {}),
        });
        const verifyOne = async (account: string): Promise<{ printed: Printed; bills: number }> => {
          const first = await verifyAccount(db, options(account));
          const bills = first.continuity.reduce((n, c) => n + c.pairs + 1, 0);
          const breaks = first.continuity.some((c) => c.breaks.length > 0);
          if (!o.repair || !breaks) return { printed: first.report, bills };
          const repair = await runRepair(config, db, account, first.continuity, o.wait === true);
          const after = await verifyAccount(db, options(account));
          return { printed: { ...after.report, repair: { ...repair, failuresBefore: first.report.failures } }, bills };
        };
        // Every account: a bar on a terminal, else one line at the end (stderr; the report is stdout's).
        const json = o.json === true || !process.stdout.isTTY;
        const progress = o.account ? undefined : new VerifyProgress(accounts.length, !json);
        const report = reportWriter(process.stdout, json);
        let ok = true;
        // --repair writes, one account at a time; a check only reads.
        for await (const { printed, bills } of inAccountOrder(accounts, parallel, verifyOne)) {
          ok &&= printed.ok;
          progress?.clear();
          report.account(printed);
          progress?.account(bills);
        }
        progress?.clear();
        for (const r of unvisited) {
          ok &&= r.ok;
          report.account(r);
        }
        report.end(ok);
        if (!ok) throw new CliExit(EXIT.failed, "verification failed: see the report");
      } finally {
        await readers?.close();
        await db.$disconnect();
      }
    });
}

async function runRepair(
  config: Config,
  db: Db,
  account: string,
  continuity: CoinContinuity[],
  wait: boolean,
): Promise<RepairResult> {
  const [
    { commandAccounts },
    { exchangeClientFromConfig },
    { commandBudgetGates },
    { createLogger },
    { repairBreaks },
  ] = await Promise.all([
    import("../command-accounts.ts"),
    import("../../exchange/client-from-config.ts"),
    import("../../exchange/budget-gates.ts"),
    import("../../log/logger.ts"),
    import("../../verify/repair.ts"),
  ]);
  const configured = (await commandAccounts(config, db)).find((a) => a.name === account);
  if (!configured) {
    throw new CliExit(
      EXIT.usage,
      `--repair re-fetches from the exchange, but account "${account}" has no credentials here ` +
        "(configure it as ACCOUNT_NAME or in ACCOUNTS_FILE, or register it with `ledger-sync accounts add`)",
    );
  }
  const logger = createLogger(config.logLevel, { format: config.logFormat });
  const gates = await commandBudgetGates(config, logger);
  const client = exchangeClientFromConfig(config, {
    credentials: configured.credentials,
    gate: gates.forAccount(account),
    logger,
    onClose: gates.close,
  });
  try {
    const lock = {
      databaseUrl: requireDatabaseUrl(config),
      account,
      groups: ["bills" as const],
      leaseMs: config.database.runLeaseMs,
      what: "verify --repair",
      wait,
      logger,
    };
    return await withAccountRunLock(lock, (signal, fences) =>
      repairBreaks({
        db,
        client,
        logger,
        account,
        continuity,
        exchangeLimits: config.exchange.limits,
        source: configured.billsSource,
        ...(fences.bills ? { fence: fences.bills } : {}),
        signal,
      }),
    );
  } finally {
    await client.close();
  }
}
