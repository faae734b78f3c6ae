import { InvalidArgumentError, Option, type Command } from "commander";
import { loadConfig, parseInstant, requireDatabaseUrl } from "../../config/index.ts";
import { ExportRequestError } from "../../export/export-errors.ts";
import { FORMAT_NAMES, type FormatName } from "../../export/formats.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { ProgressReporter } from "../progress.ts";

interface ExportFlags {
  format: FormatName | "gobd";
  account?: string;
  from?: number;
  to?: number;
  coin?: string;
  out: string;
}

const instant = (flag: string) => (v: string) => {
  const ms = parseInstant(v);
  if (ms === undefined)
    throw new InvalidArgumentError(
      `${flag} must be an ISO date or date-time ` +
        "(2026-01-31, 2026-01-31T12:00:00Z; UTC unless a zone is given) or epoch milliseconds",
    );
  return ms;
};

export function registerExport(program: Command): void {
  program
    .command("export")
    .description(
      "write one account's stored bills in ledger order, for a tax tool (koinly, cointracker, cryptact) " +
        'or exactly as stored (ledger-csv, jsonl); read-only (see docs/accounting.md, "Exports")',
    )
    .addOption(
      new Option("--format <format>", "the file's format").choices([...FORMAT_NAMES, "gobd"]).makeOptionMandatory(),
    )
    .option("--account <name>", "the account (default: the only account with bills)")
    .option("--from <date|ms>", "first instant included (default: the first bill)", instant("--from"))
    .option("--to <date|ms>", "first instant excluded (default: after the last bill)", instant("--to"))
    .option("--coin <coin>", "only bills in this coin, e.g. USDT")
    .option(
      "--out <file>",
      "write this file (as FILE.partial-<pid>, renamed when complete); - for stdout; gobd: a new directory",
      "-",
    )
    .action(async (o: ExportFlags) => {
      const databaseUrl = requireDatabaseUrl(loadConfig());
      if (o.from !== undefined && o.to !== undefined && o.to <= o.from)
        throw new CliExit(EXIT.usage, "--to must be after --from (--from is included, --to excluded)");
      if (o.format === "gobd") return exportGobd(o, databaseUrl);
      const { runExport } = await import("../../export/run-export.ts");
      // A bar on a terminal's stderr only: a log or a pipe gets the one summary line.
      const progress = () => new ProgressReporter(`export ${o.format}`, process.stderr, undefined, "pages");
      const done = await runExport({
        databaseUrl,
        ...o,
        format: o.format,
        fromMs: o.from,
        toMs: o.to,
        ...(process.stderr.isTTY ? { progress } : {}),
      }).catch((err: unknown) => {
        throw err instanceof ExportRequestError ? new CliExit(EXIT.usage, err.message) : err;
      });
      process.stderr.write(
        `export ${o.format}: ${done.bills} bills of account ${done.account}, ${done.lines} lines, ` +
          `to ${o.out === "-" ? "stdout" : o.out}\n`,
      );
    });
}

/**
 * `--format gobd`: a GoBD data set in a new directory (docs/export-gobd.md). The statement's and the
 * closes' reads are passed in from here: src/statement imports src/export, so the export cannot
 * import them (src/export/gobd/books.ts).
 */
async function exportGobd(o: ExportFlags, databaseUrl: string): Promise<void> {
  const [{ runGobdExport }, { anchorRows, movementRows }, { currentCloses }, { periodDigest }] = await Promise.all([
    import("../../export/gobd/run-gobd.ts"),
    import("../../statement/statement-sql.ts"),
    import("../../periods/close-store.ts"),
    import("../../periods/digest.ts"),
  ]);
  const done = await runGobdExport({
    databaseUrl,
    account: o.account,
    fromMs: o.from,
    toMs: o.to,
    coin: o.coin,
    out: o.out,
    books: { anchorRows, movementRows, currentCloses, periodDigest },
  }).catch((err: unknown) => {
    throw err instanceof ExportRequestError ? new CliExit(EXIT.usage, err.message) : err;
  });
  process.stderr.write(
    `export gobd: ${done.bills} bills of account ${done.account}, ${done.files.length} files, to ${o.out}\n`,
  );
}
