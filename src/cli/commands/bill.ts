// `ledger-sync bill show ID`: one bill's every version and when the books held each
// (src/verify/bill-versions.ts), to re-create the books as they stood at a past instant. Read-only,
// so the grant-readonly role can run it.
import type { Command } from "commander";
import { loadConfig, parseInstant, requireDatabaseUrl } from "../../config/index.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

interface ShowFlags {
  account?: string;
  asOf?: string;
  json?: boolean;
}

// A bill id as stored: digits without a leading zero (bill_rows refuses one), so the text names one bill.
const BILL_ID = /^(0|[1-9][0-9]*)$/;

export function registerBill(program: Command): void {
  const bill = program.command("bill").description("one stored bill: its history (read-only)");
  bill
    .command("show")
    .description(
      "every version of a bill, oldest first, with its fields and when the books held it (from when it was " +
        "stored until a newer version replaced it; the current one open-ended), so the books at any past " +
        "instant can be re-created; --as-of marks the version held then. JSON with --json or when stdout is " +
        "not a terminal. Read-only",
    )
    .argument("<id>", "the bill's id")
    .option("--account <name>", "the account (needed only when several accounts have a bill of that id)")
    .option(
      "--as-of <date|ms>",
      "mark the version the books held at this instant (an ISO date or date-time, UTC unless a zone is given, " +
        "or epoch milliseconds)",
    )
    .option("--json", "print JSON even on a terminal")
    .action(async (id: string, o: ShowFlags) => {
      if (!BILL_ID.test(id)) throw new CliExit(EXIT.usage, `bill id must be digits (no leading zero), not "${id}"`);
      const asOfMs = o.asOf === undefined ? undefined : parseInstant(o.asOf);
      if (o.asOf !== undefined && asOfMs === undefined)
        throw new CliExit(
          EXIT.usage,
          `--as-of ${o.asOf}: must be an ISO date or date-time (2026-10-01, 2026-10-01T12:00Z) or epoch milliseconds`,
        );
      const config = loadConfig();
      const [{ createDb }, { billHistory, BillLookupError, formatBillHistory }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../verify/bill-versions.ts"),
      ]);
      const db = createDb(requireDatabaseUrl(config));
      try {
        const history = await billHistory(db, {
          billId: id,
          ...(o.account === undefined ? {} : { account: o.account }),
          ...(asOfMs === undefined ? {} : { asOfMs }),
        }).catch((err: unknown) => {
          throw err instanceof BillLookupError ? new CliExit(EXIT.usage, err.message) : err;
        });
        const json = o.json === true || !process.stdout.isTTY;
        process.stdout.write(json ? `${JSON.stringify(history, null, 2)}\n` : formatBillHistory(history));
      } finally {
        await db.$disconnect();
      }
    });
}
