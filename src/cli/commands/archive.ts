// `ledger-sync archive detach|attach`: a closed month of bills to files and back (src/archive). Refusals
// and bad input are one line and exit 2, with nothing changed; other failures exit 1, also with
// nothing changed (every change is one transaction).
import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import type { AttachOutcome } from "../../archive/attach.ts";
import type { DetachOutcome } from "../../archive/detach.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

interface DetachFlags {
  month: string;
  out: string;
  confirm?: boolean;
  json?: boolean;
}

interface AttachFlags {
  json?: boolean;
}

/** Runs an archive step; its refusals become exit 2 with their one line. */
async function refusalsAsUsage<T>(work: () => Promise<T>): Promise<T> {
  const { ArchiveRefused } = await import("../../archive/month.ts");
  try {
    return await work();
  } catch (err) {
    throw err instanceof ArchiveRefused ? new CliExit(EXIT.usage, err.message) : err;
  }
}

// Steps on a terminal only: elsewhere stderr holds nothing but a refusal's or failure's one line.
const progress = (line: string) => {
  if (process.stderr.isTTY) process.stderr.write(`archive: ${line}\n`);
};

export function registerArchive(program: Command): void {
  const archive = program
    .command("archive")
    .description(
      "move a closed month of bills out of the database into files (a manifest with the SHA-256 of each file " +
        'and the month\'s close digests) and back, exactly (see docs/operations.md, "Archiving closed months")',
    );

  archive
    .command("detach")
    .description(
      "write a closed month (every account with bills in it has a close covering it, still intact) to DIR/YYYY-MM " +
        "and read the files back against the manifest; only with --confirm then drop the month's partition, " +
        "after which its bills are only in the archive. Refused (exit 2) for the current or a future month",
    )
    .requiredOption("--month <YYYY-MM>", "the calendar month to archive, in UTC")
    .requiredOption("--out <dir>", "the archive goes to DIR/YYYY-MM (an archive already there is checked and used)")
    .option("--confirm", "detach and DROP the month's partition once the archive is written and verified")
    .option("--json", "print the outcome as JSON")
    .action(async (o: DetachFlags) => {
      const databaseUrl = requireDatabaseUrl(loadConfig());
      const { detachMonth } = await import("../../archive/detach.ts");
      const outcome = await refusalsAsUsage(() =>
        detachMonth({ databaseUrl, month: o.month, out: o.out, confirm: o.confirm === true, progress }),
      );
      process.stdout.write(o.json ? `${JSON.stringify(outcome, null, 2)}\n` : detachText(outcome));
    });

  archive
    .command("attach")
    .description(
      "verify an archive's files against its manifest and attach the month back: refused (exit 2, nothing " +
        "changed) when a file, a digest, a key or a close does not match, or the month's partition holds bills",
    )
    .argument("<dir>", "the archive's directory, DIR/YYYY-MM, as `archive detach` wrote it")
    .option("--json", "print the outcome as JSON")
    .action(async (dir: string, o: AttachFlags) => {
      const databaseUrl = requireDatabaseUrl(loadConfig());
      const { attachArchive } = await import("../../archive/attach.ts");
      const outcome = await refusalsAsUsage(() => attachArchive({ databaseUrl, dir, progress }));
      process.stdout.write(o.json ? `${JSON.stringify(outcome, null, 2)}\n` : attachText(outcome));
    });
}

function accountsText(accounts: DetachOutcome["accounts"]): string {
  return accounts
    .map(
      (a) =>
        `  ${a.name}: ${a.bills} bill(s), sha256 ${a.digest}, sealed by ` +
        a.closes.map((c) => `close #${c.id} (${c.period})`).join(", "),
    )
    .join("\n");
}

function detachText(d: DetachOutcome): string {
  const head =
    `archive detach ${d.month}: ${d.reused ? "found" : "wrote"} and verified ${d.dir} ` +
    `(${d.files.length} files and manifest.json, manifest sha256 ${d.manifestSha256}): ${d.rows} bill(s)\n` +
    `${accountsText(d.accounts)}\n`;
  if (!d.dropped)
    return (
      head +
      `Nothing was dropped. With --confirm this would DETACH and DROP partition ${d.partition} ` +
      `(${d.rows} bills): they would then be only in this archive.\n`
    );
  return (
    head +
    `DROPPED partition ${d.partition}: the ${d.rows} bills of ${d.month} are now ONLY in the archive ${d.dir}.\n` +
    "Keep it safe (copy it elsewhere, record the manifest's sha256); " +
    `\`ledger-sync archive attach ${d.dir}\` brings them back.\n` +
    `Until then ${d.month} is recorded as archived: verify checks the stored months (the chain continues from ` +
    `${d.month}'s last balances) and ${d.month}'s closes against the archive; a statement, an export or a close ` +
    `over ${d.month}, and a bill of ${d.month} arriving late, are refused by name.\n`
  );
}

function attachText(a: AttachOutcome): string {
  const added = a.keysAdded.accountKeys + a.keysAdded.billTerms + a.keysAdded.billForms;
  return (
    `archive attach ${a.month}: attached ${a.partition}, ${a.rows} bill(s), every digest as archived\n` +
    a.accounts.map((x) => `  ${x.name}: ${x.bills} bill(s), sha256 ${x.digest}`).join("\n") +
    "\n" +
    (added > 0
      ? `keys added with the archive's ids: ${a.keysAdded.accountKeys} account(s), ` +
        `${a.keysAdded.billTerms} term(s), ${a.keysAdded.billForms} form(s)\n`
      : "") +
    (a.replacedEmpty ? `an empty partition ${a.partition} was there and was replaced\n` : "") +
    (a.rollupsAdded ? `daily_rollups of ${a.month} were missing and were added from the bills\n` : "")
  );
}
