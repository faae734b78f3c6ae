// `ledger-sync audit-report --period YYYY-MM`: the accountant's change report of one account-month
// (src/periods/audit-report): the runs that read it, the bills revised and stored late, its closes,
// the configuration and the statement's totals. Read-only, so the grant-readonly role can run it.
// Written to stdout, or to --out FILE as the exports write theirs (FILE.partial-<pid>, renamed when
// complete, removed on a failure or Ctrl-C).
import { Option, type Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import type { ExportOutput } from "../../export/export-output.ts";
import type { AuditReport } from "../../periods/audit-report/report.ts";
import { monthPeriod } from "../../statement/period.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { asUsage } from "./statement.ts";

export const AUDIT_REPORT_FORMATS = ["text", "csv", "html", "json"] as const;
type Format = (typeof AUDIT_REPORT_FORMATS)[number];

interface AuditReportFlags {
  period: string;
  account?: string;
  format: Format;
  out: string;
}

export function registerAuditReport(program: Command): void {
  program
    .command("audit-report")
    .description(
      "an account-month's change report for its accountant or auditor: the runs that read the month from the " +
        "exchange, the bills revised after they were stored (old and new values), the bills stored late (after " +
        "the month's first close, or past SYNC_LOOKBACK_MS), every close and supersession with its reasons and " +
        "seal, the configuration that mattered, and per coin the statement's totals; read-only " +
        '(see docs/accounting.md, "The audit report and a bill\'s history")',
    )
    .requiredOption("--period <YYYY-MM>", "the calendar month, in UTC")
    .option("--account <name>", "the account (default: the only account with bills)")
    .addOption(new Option("--format <format>", "output format").choices(AUDIT_REPORT_FORMATS).default("text"))
    .option("--out <file>", "write this file (as FILE.partial-<pid>, renamed when complete); - for stdout", "-")
    .action(async (o: AuditReportFlags) => {
      const period = await asUsage(() => monthPeriod(o.period));
      const config = loadConfig();
      const [{ createDb }, { resolveAccount }, { readAuditReport }, { openExportOutput, UnwritableOutputError }] =
        await Promise.all([
          import("../../store/prisma.ts"),
          import("../../statement/account.ts"),
          import("../../periods/audit-report/read.ts"),
          import("../../export/export-output.ts"),
        ]);
      const { interruptSignal } = await import("../../export/interrupt.ts");
      const db = createDb(requireDatabaseUrl(config));
      let output: ExportOutput | undefined;
      let written = false;
      // Ctrl-C or SIGTERM ends the command at once (exit 130), the partial file removed below.
      const interrupt = interruptSignal();
      const stopped = new Promise<never>((_, reject) => {
        const stop = () => reject(interrupt.signal.reason as Error);
        if (interrupt.signal.aborted) stop();
        else interrupt.signal.addEventListener("abort", stop, { once: true });
      });
      const work = async () => {
        const account = await asUsage(() => resolveAccount(db, o.account));
        // Before the read: an --out that cannot be written is a usage error, and nothing was done.
        output = await openExportOutput(o.out).catch((err: unknown) => {
          throw err instanceof UnwritableOutputError ? new CliExit(EXIT.usage, err.message) : err;
        });
        const report = await asUsage(() => readAuditReport(db, { account, period, config, env: process.env }));
        // An interrupted report is not committed, even when its last read had already come back.
        interrupt.signal.throwIfAborted();
        await writeAll(output, await render(report, o.format));
        interrupt.signal.throwIfAborted();
        await output.commit();
        written = true;
      };
      const working = work();
      // Whichever loses the race is settled here, not left unhandled.
      working.catch(() => undefined);
      stopped.catch(() => undefined);
      try {
        await Promise.race([working, stopped]);
      } finally {
        // Interrupted: the read stops at its next query (the pool is ended), and only once it has
        // stopped is its partial file removed, so none is left behind.
        await db.$disconnect();
        await working.catch(() => undefined);
        const left = output as ExportOutput | undefined;
        if (left && !written) await left.discard();
        interrupt.release();
      }
    });
}

async function writeAll(output: ExportOutput, text: string): Promise<void> {
  if (!output.end) {
    output.stream.write(text);
    return;
  }
  await new Promise<void>((done, fail) => {
    output.stream.once("error", fail);
    output.stream.end(text, () => done());
  });
}

async function render(r: AuditReport, format: Format): Promise<string> {
  if (format === "json") return `${JSON.stringify(r, null, 2)}\n`;
  if (format === "csv") return (await import("../../periods/audit-report/format-csv.ts")).formatAuditCsv(r);
  if (format === "html") return (await import("../../periods/audit-report/format-html.ts")).formatAuditHtml(r);
  return (await import("../../periods/audit-report/format-text.ts")).formatAuditText(r);
}
