import { InvalidArgumentError, type Command } from "commander";
import { loadConfig, parseInstant, requireDatabaseUrl, type Config } from "../../config/index.ts";
import type { Db } from "../../store/prisma.ts";
import type { CoinContinuity } from "../../verify/balance-continuity.ts";
import type { AccountReport } from "../../verify/report.ts";
import type { RepairResult } from "../../verify/repair.ts";
import { withAccountRunLock } from "../account-run-lock.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import type { ExchangeReaders } from "./verify-exchange-reader.ts";

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
}

type Printed = AccountReport & { repair?: RepairResult & { failuresBefore: number } };

export function registerVerify(program: Command): void {
  program
    .command("verify")
    .description(
      "prove the stored books: balance continuity per coin (each break with the bill ids on both sides), " +
        "bill balances and sums against collateral snapshots, quarantine, cursor lag; " +
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
      if (o.from !== undefined && o.to !== undefined && o.to < o.from)
        throw new CliExit(EXIT.usage, "--to is before --from");
      if (o.crossCheck) {
        if (o.repair)
          throw new CliExit(EXIT.usage, "--cross-check and --repair do not go together: the cross-check only reads");
        const { runCrossChecks } = await import("./cross-check-run.ts");
        return runCrossChecks(config, o);
      }
      const [{ createDb }, { verifyAccount }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../verify/verify-account.ts"),
      ]);
      const db = createDb(requireDatabaseUrl(config));
      let readers: ExchangeReaders | undefined;
      try {
        const withBills = async () =>
          (await db.$queryRawUnsafe<{ a: string }[]>("SELECT DISTINCT account_name AS a FROM bills ORDER BY 1")).map(
            (r) => r.a,
          );
        // An account with no bills would "pass" with nothing checked: a typo must not look like proof.
        if (
          o.account &&
          !(
            await db.$queryRawUnsafe<{ e: boolean }[]>(
              "SELECT EXISTS (SELECT 1 FROM bills WHERE account_name = $1) AS e",
              o.account,
            )
          )[0]!.e
        ) {
          throw new CliExit(
            EXIT.usage,
            `--account ${o.account}: no bills are stored for that account ` +
              `(accounts with bills: ${(await withBills()).join(", ") || "none"})`,
          );
        }
        const accounts = o.account ? [o.account] : await withBills();
        if (accounts.length === 0) throw new CliExit(EXIT.failed, "no bills to verify");
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
        });
        const reports: Printed[] = [];
        for (const account of accounts) {
          const first = await verifyAccount(db, options(account));
          const breaks = first.continuity.some((c) => c.breaks.length > 0);
          if (!o.repair || !breaks) {
            reports.push(first.report);
            continue;
          }
          const repair = await runRepair(config, db, account, first.continuity, o.wait === true);
          const after = await verifyAccount(db, options(account));
          reports.push({ ...after.report, repair: { ...repair, failuresBefore: first.report.failures } });
        }
        const ok = reports.every((r) => r.ok);
        process.stdout.write(
          o.json || !process.stdout.isTTY ? `${JSON.stringify({ ok, accounts: reports })}\n` : formatReports(reports),
        );
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

const TAG = { pass: "PASS", fail: "FAIL", inconclusive: "INCONCLUSIVE", skipped: "SKIPPED" } as const;

function formatReports(reports: Printed[]): string {
  const out: string[] = [];
  for (const r of reports) {
    out.push(`account "${r.account}": ${r.ok ? "all checks pass" : `${r.failures} failure(s)`}`);
    if (r.repair) {
      out.push(
        `  repair: ${r.repair.windows.length} window(s) re-fetched (${r.repair.requests} requests): ` +
          `${r.repair.restored} bill(s) restored, ${r.repair.revised} corrected; ` +
          `failures ${r.repair.failuresBefore} -> ${r.failures}`,
      );
    }
    for (const c of r.checks) {
      out.push(`  ${TAG[c.status].padEnd(12)} ${c.check} ${c.subject}: ${c.summary}`);
      const breaks =
        (
          c.details as
            | {
                breaks?: {
                  previousBillId: string;
                  previousAt: string;
                  billId: string;
                  at: string;
                  gapMs: number;
                  expectedBalance: string;
                  actualBalance: string;
                }[];
              }
            | undefined
        )?.breaks ?? [];
      for (const b of breaks.slice(0, 20)) {
        out.push(
          `      between bill ${b.previousBillId} (${b.previousAt}) and ${b.billId} (${b.at}), ${b.gapMs} ms apart: ` +
            `expected balance ${b.expectedBalance}, found ${b.actualBalance}`,
        );
      }
      if (breaks.length > 20) out.push(`      ... ${breaks.length - 20} more (--json lists them all)`);
    }
  }
  return `${out.join("\n")}\n`;
}
