// `ledger-sync archive detach|attach|drill|drills`: a closed month of bills to files and back, and the
// restore drill of an archive into an empty database against its anchors (src/archive). Refusals and
// bad input are one line and exit 2, with nothing changed; other failures exit 1, also with nothing
// changed (every change is one transaction). A drill that finds a failure exits 1 too, recorded.
import type { Command } from "commander";
import { loadConfig, requireDatabaseUrl } from "../../config/index.ts";
import type { AttachOutcome } from "../../archive/attach.ts";
import type { DetachOutcome } from "../../archive/detach.ts";
import type { DrillRecord } from "../../archive/drill/drill-records.ts";
import type { CloseResult, DrillOutcome } from "../../archive/drill/drill-types.ts";
import { osUser } from "../accounts/holds.ts";
import { anchorsDir } from "../anchors-dir.ts";
import { CliExit, EXIT } from "../exit-codes.ts";
import { createRuntime } from "../runtime.ts";

interface DetachFlags {
  month: string;
  out: string;
  confirm?: boolean;
  json?: boolean;
}

interface AttachFlags {
  json?: boolean;
}

interface DrillFlags {
  anchors?: string;
  into?: string;
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
        "and the month's close digests) and back, exactly, and drill an archive's restore into an empty database " +
        'against the closes\' anchors (see docs/operations.md, "Archiving closed months" and "Restore drill")',
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

  archive
    .command("drill")
    .description(
      "restore drill: load an archived month into an EMPTY database, migrated by ledger-sync, and re-verify it " +
        "there: every file against the manifest, every row count, each account's month digest, and each close " +
        "the manifest lists against its anchor (digest, bill count and Merkle root recomputed from the restored " +
        "bills; the anchor's head the hash of its seal). Recorded, pass or fail, in restore_drills of DATABASE_URL " +
        "(`archive drills` lists them). Exit 0 when every close is proven, 1 naming every failure, 2 for a " +
        "refusal (nothing started, nothing recorded)",
    )
    .argument("<dir>", "the archive's directory, DIR/YYYY-MM, as `archive detach` wrote it")
    .option("--anchors <dir>", "the anchors directory the month's closes were anchored in (default: ANCHOR_DIR)")
    .option(
      "--into <url>",
      "an empty PostgreSQL database to restore into (refused if it holds any table), left as restored; " +
        "default: a throwaway local PostgreSQL from the bundled binaries, stopped and removed afterwards",
    )
    .option("--json", "print the outcome as JSON")
    .action(async (dir: string, o: DrillFlags) => {
      const { config, signal } = createRuntime();
      const databaseUrl = requireDatabaseUrl(config);
      const anchors = anchorsDir(o.anchors, config);
      if (anchors === undefined)
        throw new CliExit(EXIT.usage, "give --anchors DIR (where the month's closes were anchored), or set ANCHOR_DIR");
      const [{ createDb }, { runDrill, DrillNotRecorded }, { throwawayTarget }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../archive/drill/run-drill.ts"),
        import("../archive-drill-target.ts"),
      ]);
      const db = createDb(databaseUrl);
      try {
        const run = await refusalsAsUsage(() =>
          runDrill({
            db,
            dir,
            anchorsDir: anchors,
            into: o.into,
            throwaway: throwawayTarget,
            runBy: osUser(),
            progress,
            signal,
          }),
        ).catch((err: unknown) => {
          if (!(err instanceof DrillNotRecorded)) throw err;
          process.stdout.write(o.json ? `${JSON.stringify(err.outcome, null, 2)}\n` : drillText(err.outcome));
          throw new CliExit(EXIT.failed, err.message);
        });
        process.stdout.write(
          o.json
            ? `${JSON.stringify({ ...run.outcome, recordId: run.recordId }, null, 2)}\n`
            : `${drillText(run.outcome)}recorded as restore drill #${run.recordId} (restore_drills)\n`,
        );
        const failures = run.outcome.failures;
        if (failures.length > 0)
          throw new CliExit(
            EXIT.failed,
            `the restore drill of ${run.outcome.month} failed (${failures.length} failure(s), recorded as ` +
              `#${run.recordId}): ${failures[0]!.message}${failures.length > 1 ? "; ..." : ""}`,
          );
      } finally {
        await db.$disconnect();
      }
    });

  archive
    .command("drills")
    .description("the recorded restore drills (restore_drills), newest first (JSON lines with --json)")
    .option("--json", "one JSON object per drill and line")
    .action(async (o: { json?: boolean }) => {
      const databaseUrl = requireDatabaseUrl(loadConfig());
      const [{ createDb }, { listDrills }] = await Promise.all([
        import("../../store/prisma.ts"),
        import("../../archive/drill/drill-records.ts"),
      ]);
      const db = createDb(databaseUrl);
      try {
        const drills = await listDrills(db);
        process.stdout.write(o.json ? drills.map((d) => `${JSON.stringify(d)}\n`).join("") : drillsText(drills));
      } finally {
        await db.$disconnect();
      }
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

function closeText(c: CloseResult): string {
  const head = `    close #${c.closeId} (${c.period}): ${c.status}`;
  const r = c.restored;
  const a = c.anchored;
  if (c.status === "proven" && r && a)
    return (
      `${head}: ${r.bills} bill(s), sha256 ${r.digest}, Merkle root ${r.merkleRoot}` +
      (a.merkleRoot === null ? " (its seal has no Merkle root: digest and count compared)" : "") +
      `, head ${a.head}, as anchored in ${c.anchor}`
    );
  if (c.status === "beyond-month")
    return (
      `${head}: its period reaches beyond the month, so it sealed bills this archive does not hold ` +
      `(${a?.bills ?? "?"} in all, ${r?.bills ?? "?"} of them restored here); its anchor ${c.anchor} is ` +
      "self-consistent and agrees with the manifest, its digest cannot be recomputed from this month alone"
    );
  const restored = r ? `the restored bills give ${r.bills} bill(s), sha256 ${r.digest}` : "nothing recomputed";
  const anchored = a
    ? `the anchor sealed ${a.bills}, sha256 ${a.digest} (${c.anchor})`
    : `no anchor read (${c.anchor})`;
  return `${head}: ${restored}; ${anchored}`;
}

function drillText(d: DrillOutcome): string {
  const where = `${d.target}${d.serverVersion ? ` (PostgreSQL ${d.serverVersion})` : ""}`;
  const lines = [
    d.outcome === "pass"
      ? `archive drill ${d.month}: PASS: ${d.billsLoaded} bill(s) of ${d.accounts.length} account(s) restored ` +
        `from ${d.archiveDir} into ${where}; ${d.closesProven} of ${d.closesChecked} close(s) proven by their ` +
        `anchors in ${d.anchorsDir}`
      : `archive drill ${d.month}: FAIL: ${d.failures.length} failure(s); ${d.billsLoaded} bill(s) restored from ` +
        `${d.archiveDir} into ${where}; ${d.closesProven} of ${d.closesChecked} close(s) proven by their anchors ` +
        `in ${d.anchorsDir}`,
    ...d.failures.map((f) => `  FAILED ${f.kind}: ${f.message}`),
  ];
  for (const a of d.accounts) {
    const r = a.restored;
    lines.push(
      r === null
        ? `  ${a.name}: not restored (the manifest says ${a.manifest.bills} bill(s), sha256 ${a.manifest.digest})`
        : `  ${a.name}: ${r.bills} bill(s), sha256 ${r.digest}` +
            (r.bills === a.manifest.bills && r.digest === a.manifest.digest
              ? ", as the manifest says"
              : `; the manifest says ${a.manifest.bills}, ${a.manifest.digest}`),
    );
    for (const c of d.closes.filter((x) => x.account === a.name)) lines.push(closeText(c));
  }
  for (const u of d.unlisted)
    lines.push(
      `  not listed by the manifest: close #${u.closeId} (${u.period}) of ${u.account}, ${u.path}: superseded ` +
        "before the month was archived, or made after (a manifest lists the current closes only)" +
        (u.matchesRestored === null
          ? ""
          : u.matchesRestored
            ? "; the restored bills give its digest"
            : "; the restored bills do not give its digest"),
    );
  return `${lines.join("\n")}\n`;
}

function drillsText(drills: DrillRecord[]): string {
  if (drills.length === 0) return "no restore drills recorded\n";
  return drills
    .map(
      (d) =>
        `#${d.id}  ${d.month}  ${d.outcome.toUpperCase()}  ${d.startedAt} .. ${d.finishedAt}  ` +
        `${d.billsLoaded} bill(s), ${d.accounts} account(s), ${d.closesProven}/${d.closesChecked} close(s) proven  ` +
        `${d.archiveDir} (manifest sha256 ${d.manifestSha256}) against ${d.anchorsDir}, into ${d.target}` +
        `${d.serverVersion ? ` (PostgreSQL ${d.serverVersion})` : ""}, by ${d.runBy} as ${d.dbUser}\n` +
        d.failures.map((f) => `    FAILED ${f.kind}: ${f.message}\n`).join(""),
    )
    .join("");
}
