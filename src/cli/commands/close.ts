// `ledger-sync close`: seal a period's books (src/periods), or list the closed periods and whether
// their bills are still the ones sealed. Closing writes; listing only reads.
import { userInfo } from "node:os";
import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl, type Config } from "../../config/index.ts";
import type { Db } from "../../store/prisma.ts";
import { parseMaxGap } from "../../statement/max-gap.ts";
import { monthPeriod } from "../../statement/period.ts";
import { anchorsDir } from "../anchors-dir.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { asUsage, MAX_GAP_HELP } from "./statement.ts";

interface CloseFlags {
  period?: string;
  account?: string;
  by?: string;
  list?: boolean;
  json?: boolean;
  acceptUntied?: string;
  maxGap?: string;
  anchors?: string;
}

/** The operating-system user, for --by; some containers run a uid with no name. */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? `uid ${process.getuid?.() ?? "unknown"}`;
  }
}

export function registerClose(program: Command): void {
  program
    .command("close")
    .description(
      "seal a period: refused while verify fails over it, the bills are not synced past its end plus " +
        "SYNC_LOOKBACK_MS, or its roll-forward (opening + movements = closing = the reported collateral " +
        "nearest the end) is not tied, unless --accept-untied gives a reason; stores its statement, bill count " +
        "and SHA-256 digest in period_closes, and from then on verify reports any bill that changes in it. " +
        "--list shows every closed period and whether it is intact",
    )
    .option("--period <YYYY-MM>", "the calendar month to close, in UTC")
    .option("--account <name>", "the account (default: the only account with bills; with --list: every account)")
    .option("--by <name>", "who closes it, stored with the close (default: the operating-system user)")
    .option(
      "--accept-untied <reason>",
      "close a period whose roll-forward is not tied (not tied or unreconcilable); the reason is stored with the close",
    )
    .option("--max-gap <duration>", MAX_GAP_HELP)
    .option(
      "--anchors <dir>",
      "write the account's closes' anchors (their seals' heads) to this directory outside the database, " +
        "stamped by ANCHOR_TSA_URL when set (default: ANCHOR_DIR)",
    )
    .option(
      "--list",
      "list the closed periods: digest, state (intact / changed), roll-forward and untied reason; read-only",
    )
    .option("--json", "print JSON even on a terminal")
    .action(async (o: CloseFlags) => {
      if (o.list && [o.period, o.by, o.acceptUntied, o.maxGap, o.anchors].some((v) => v !== undefined))
        throw new CliExit(
          EXIT.usage,
          "--list takes no --period, --by, --accept-untied, --max-gap or --anchors: it lists every closed period",
        );
      if (o.anchors !== undefined && o.anchors.trim() === "")
        throw new CliExit(EXIT.usage, "--anchors must not be empty");
      if (!o.list && o.period === undefined)
        throw new CliExit(EXIT.usage, "give --period YYYY-MM to close, or --list to list the closed periods");
      const period = o.period === undefined ? undefined : await asUsage(() => monthPeriod(o.period!));
      if (o.by !== undefined && o.by.trim() === "") throw new CliExit(EXIT.usage, "--by must not be empty");
      if (o.acceptUntied !== undefined && o.acceptUntied.trim() === "")
        throw new CliExit(EXIT.usage, '--accept-untied needs a reason: --accept-untied "why it is closed untied"');
      const maxGapMs = o.maxGap === undefined ? undefined : await asUsage(() => parseMaxGap(o.maxGap!));
      const config = loadConfig();
      const anchorDir = o.list ? undefined : anchorsDir(o.anchors, config);
      const { createDb } = await import("../../store/prisma.ts");
      const db = createDb(requireDatabaseUrl(config));
      const json = o.json === true || !process.stdout.isTTY;
      try {
        if (period === undefined) {
          const [{ listClosedPeriods }, { formatListing }] = await Promise.all([
            import("../../periods/list-closes.ts"),
            import("../../periods/format-closes.ts"),
          ]);
          const rows = await listClosedPeriods(db, o.account);
          process.stdout.write(json ? `${JSON.stringify({ closedPeriods: rows }, null, 2)}\n` : formatListing(rows));
          return;
        }
        const [{ resolveAccount }, { closePeriod }, { CloseRefused }, { formatCloseOutcome }, { SealChainError }] =
          await Promise.all([
            import("../../statement/account.ts"),
            import("../../periods/close-period.ts"),
            import("../../periods/close-preconditions.ts"),
            import("../../periods/format-closes.ts"),
            import("../../periods/seal-chain.ts"),
          ]);
        const account = await asUsage(() => resolveAccount(db, o.account));
        const outcome = await closePeriod(db, {
          account,
          period,
          coinNames: config.coinNames,
          lookbackMs: config.lookbackMs,
          closedBy: o.by ?? osUser(),
          maxGapMs,
          acceptUntied: o.acceptUntied,
        }).catch((err: unknown) => {
          throw err instanceof CloseRefused || err instanceof SealChainError
            ? new CliExit(EXIT.failed, err.message)
            : err;
        });
        const said = formatCloseOutcome(outcome);
        const anchored = anchorDir === undefined ? undefined : await anchorAccount(db, anchorDir, account, config);
        const shown = { ...outcome, ...(anchored ? { anchors: anchored } : {}), message: said.trim() };
        process.stdout.write(
          json ? `${JSON.stringify(shown, null, 2)}\n` : said + (anchored ? `${anchored.message}\n` : ""),
        );
      } finally {
        await db.$disconnect();
      }
    });
}

/**
 * After a close (or a close found unchanged), the account's anchors the directory lacks. The close
 * is stored already: a failure here says so and how to write them later.
 */
async function anchorAccount(
  db: Db,
  dir: string,
  account: string,
  config: Config,
): Promise<{ dir: string; written: string[]; message: string }> {
  const { exportAnchors } = await import("../../periods/anchors/export-anchors.ts");
  const done = await exportAnchors(db, {
    dir,
    account,
    ...(config.anchors.tsaUrl ? { tsaUrl: config.anchors.tsaUrl } : {}),
  }).catch((err: unknown) => {
    throw new CliExit(
      EXIT.failed,
      `the close is stored, but its anchor was not written (${err instanceof Error ? err.message : String(err)}): ` +
        "write it with `ledger-sync anchors export`",
    );
  });
  const written = done.written.map((w) => w.path);
  return {
    dir,
    written,
    message:
      `anchors in ${dir}: ${written.length} written${done.written.some((w) => w.token) ? " (time-stamped)" : ""}, ` +
      `${done.present} already there`,
  };
}
