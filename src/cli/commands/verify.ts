import { InvalidArgumentError, type Command } from "commander";
import { loadConfig, parseInstant, requireDatabaseUrl } from "../../config/index.ts";
import type { CoinContinuity } from "../../verify/balance-continuity.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

const instant = (flag: string) => (v: string) => {
  const ms = parseInstant(v);
  if (ms === undefined) throw new InvalidArgumentError(`${flag} must be an ISO date (2026-01-31) or epoch milliseconds`);
  return ms;
};

type Status = "pass" | "fail" | "inconclusive";
const statusOf = (c: CoinContinuity): Status => (c.rule === null ? "inconclusive" : c.breaks.length > 0 ? "fail" : "pass");

export function registerVerify(program: Command): void {
  program
    .command("verify")
    .description("prove the stored books: balance continuity per account and coin (every break reported with the bill ids on both sides); exit 0 when all pass, 1 otherwise")
    .option("--account <name>", "only this account (default: every account with bills)")
    .option("--from <date|ms>", "start of the range checked", instant("--from"))
    .option("--to <date|ms>", "end of the range checked", instant("--to"))
    .option("--json", "print JSON even on a terminal")
    .action(async (o: { account?: string; from?: number; to?: number; json?: boolean }) => {
      const config = loadConfig();
      if (o.from !== undefined && o.to !== undefined && o.to < o.from) throw new CliExit(EXIT.usage, "--to is before --from");
      const [{ createDb }, { checkBalanceContinuity, RULES }] = await Promise.all([import("../../store/prisma.ts"), import("../../verify/balance-continuity.ts")]);
      const db = createDb(requireDatabaseUrl(config));
      try {
        const withBills = async () => (await db.$queryRawUnsafe<{ a: string }[]>("SELECT DISTINCT account_name AS a FROM bills ORDER BY 1")).map((r) => r.a);
        // An account with no bills would "pass" with nothing checked: a typo must not look like proof.
        if (o.account && !(await db.$queryRawUnsafe<{ e: boolean }[]>("SELECT EXISTS (SELECT 1 FROM bills WHERE account_name = $1) AS e", o.account))[0]!.e) {
          throw new CliExit(EXIT.usage, `--account ${o.account}: no bills are stored for that account (accounts with bills: ${(await withBills()).join(", ") || "none"})`);
        }
        const accounts = o.account ? [o.account] : await withBills();
        const report = [];
        for (const account of accounts) {
          const coins = await checkBalanceContinuity(db, { account, fromMs: o.from, toMs: o.to });
          report.push({ account, checks: coins.map((c) => ({ check: "balance-continuity", status: statusOf(c), ...c, ruleText: c.rule ? RULES[c.rule] : null })) });
        }
        const ok = report.length > 0 && report.every((a) => a.checks.every((c) => c.status === "pass"));
        if (o.json || !process.stdout.isTTY) {
          process.stdout.write(`${JSON.stringify({ ok, accounts: report })}\n`);
        } else {
          for (const a of report) {
            process.stdout.write(`account "${a.account}"\n`);
            for (const c of a.checks) {
              const share = (n: number) => (c.pairs ? `${((100 * n) / c.pairs).toFixed(1)}%` : "-");
              process.stdout.write(
                c.status === "inconclusive"
                  ? `  ${c.coin}: INCONCLUSIVE: no rule explains the balances (plain ${share(c.explained.plain)}, minus fee ${share(c.explained.minus_fee)}, plus fee ${share(c.explained.plus_fee)} of ${c.pairs} pairs)\n`
                  : `  ${c.coin}: ${c.pairs} pairs, ${c.ruleText}: ${c.status === "pass" ? "pass" : `FAIL, ${c.breaks.length}${c.truncated ? "+" : ""} breaks`}\n`,
              );
              for (const b of c.breaks.slice(0, 20)) {
                process.stdout.write(`    between bill ${b.previousBillId} (${b.previousAt}) and ${b.billId} (${b.at}), ${b.gapMs} ms apart: expected balance ${b.expectedBalance}, found ${b.actualBalance}\n`);
              }
            }
          }
        }
        if (report.length === 0) throw new CliExit(EXIT.failed, "no bills to verify");
        if (!ok) throw new CliExit(EXIT.failed, "verification failed: see the report");
      } finally {
        await db.$disconnect();
      }
    });
}
