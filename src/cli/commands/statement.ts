// `ledger-sync statement`: an account's books over a period, per coin (src/statement). Read-only,
// so the grant-readonly role can run it.
import { Option, type Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import { DEFAULT_MAX_GAP_MS, durationText, parseMaxGap } from "../../statement/max-gap.ts";
import { periodFromFlags, UsageError } from "../../statement/period.ts";
import type { Statement } from "../../statement/statement.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

export const STATEMENT_FORMATS = ["text", "csv", "json", "html"] as const;
type Format = (typeof STATEMENT_FORMATS)[number];

interface StatementFlags {
  period?: string;
  from?: string;
  to?: string;
  account?: string;
  format: Format;
  maxGap?: string;
}

/** --max-gap, shared with close: how far from the period end a snapshot may be to tie the closing balance. */
export const MAX_GAP_HELP =
  "how far from the period end the collateral snapshot may be and still tie the roll-forward: " +
  `ms, or 90s, 15m, 2h, 1d (default ${durationText(DEFAULT_MAX_GAP_MS)})`;

/** A UsageError (bad period, unknown account) ends as one line and exit code 2. */
export async function asUsage<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw err instanceof UsageError ? new CliExit(EXIT.usage, err.message) : err;
  }
}

export function registerStatement(program: Command): void {
  program
    .command("statement")
    .description(
      "an account's statement over a period, per coin: opening balance, movements by business type, fees, " +
        "funding, trading result, closing balance, the balance chain (opening + movements = closing), " +
        "the collateral snapshot nearest the end (with COIN_NAMES) and the roll-forward tying the closing " +
        "balance to it; read-only",
    )
    .option("--period <YYYY-MM>", "a calendar month, in UTC")
    .option("--from <date|ms>", "start of the range, included (instead of --period)")
    .option("--to <date|ms>", "end of the range, excluded (instead of --period)")
    .option("--account <name>", "the account (default: the only account with bills)")
    .addOption(new Option("--format <format>", "output format").choices(STATEMENT_FORMATS).default("text"))
    .option("--max-gap <duration>", MAX_GAP_HELP)
    .action(async (o: StatementFlags) => {
      const period = await asUsage(() => periodFromFlags(o));
      const maxGapMs = o.maxGap === undefined ? undefined : await asUsage(() => parseMaxGap(o.maxGap!));
      const config = loadConfig();
      const [{ createDb }, { resolveAccount }, { buildStatement }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../statement/account.ts"),
        import("../../statement/statement.ts"),
      ]);
      const db = createDb(requireDatabaseUrl(config));
      try {
        const account = await asUsage(() => resolveAccount(db, o.account));
        const statement = await buildStatement(db, { account, period, coinNames: config.coinNames, maxGapMs });
        process.stdout.write(await render(statement, o.format));
      } finally {
        await db.$disconnect();
      }
    });
}

async function render(s: Statement, format: Format): Promise<string> {
  if (format === "json") return `${JSON.stringify(s, null, 2)}\n`;
  if (format === "csv") return (await import("../../statement/format-csv.ts")).formatStatementCsv(s);
  if (format === "html") return (await import("../../statement/format-html.ts")).formatStatementHtml(s);
  return (await import("../../statement/format-text.ts")).formatStatementText(s);
}
