// `ledger-sync archive drill DIR --anchors ANCHOR_DIR [--into URL]`: the restore drill of issue 33. An
// archived month (archive detach) is loaded into an EMPTY database, and re-verified there against
// the anchors of its closes, written outside any database when the month was closed: what the month
// proves is shown to survive the round trip through files, without the books' database.
//
// 1. Refusals, before anything starts (ArchiveRefused, exit 2, nothing recorded): the books'
//    database cannot take the record; the manifest is not one (read strictly, manifest.ts), or says a
//    digest form this ledger-sync does not know; the anchors directory is not one; --into is not an
//    empty database (target-into.ts).
// 2. The drill (recorded whatever its end): every file against the manifest, size and SHA-256, as
//    attach reads them (files.ts verifyFiles; a file that differs fails the drill, nothing is loaded);
//    the empty database (--into, or the caller's throwaway local PostgreSQL, released at the end);
//    the restore (restore-month.ts); the verdict (judge-month.ts).
// 3. The record, pass or fail, in the books' database (drill-records.ts).
import { stat } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { pgConnectionConfig } from "../../store/pg-config.ts";
import { createDb, type Db } from "../../store/prisma.ts";
import { fileFacts, verifyFiles } from "../files.ts";
import { MANIFEST, manifestForm, readManifest, type Manifest } from "../manifest.ts";
import { ArchiveRefused, type ArchiveMonth } from "../month.ts";
import { assertMayRecord, recordDrill } from "./drill-records.ts";
import type { DrillFailure, DrillOutcome, RestoreTarget } from "./drill-types.ts";
import { judgeMonth, type MonthVerdict } from "./judge-month.ts";
import { restoreMonth } from "./restore-month.ts";
import { targetInto } from "./target-into.ts";

export interface DrillOptions {
  /** The books' database, where the drill is recorded. */
  db: Db;
  /** The archive's directory, DIR/YYYY-MM. */
  dir: string;
  anchorsDir: string;
  /** An empty database to restore into (refused unless empty); without it, `throwaway`. */
  into?: string;
  /**
   * Starts an empty database of its own for the drill, released (stopped, removed) when it ends: the
   * CLI's throwaway local PostgreSQL (the domain starts no servers).
   */
  throwaway: (progress: (line: string) => void) => Promise<RestoreTarget>;
  /** Who runs it (the operating-system user), for the record. */
  runBy: string;
  progress?: (line: string) => void;
  /** Aborted (SIGINT, SIGTERM): the drill stops between steps, releases its target and is recorded. */
  signal?: AbortSignal;
}

export interface DrillRun {
  outcome: DrillOutcome;
  /** restore_drills.id of its record. */
  recordId: string;
}

/** The drill ran, but its record could not be written: the outcome is here all the same. */
export class DrillNotRecorded extends Error {
  override name = "DrillNotRecorded";
  constructor(
    readonly outcome: DrillOutcome,
    cause: unknown,
  ) {
    super(
      `the restore drill of ${outcome.month} ended (${outcome.outcome}) but could not be recorded in the books' ` +
        `database: ${(cause as Error).message}`,
    );
  }
}

export async function runDrill(o: DrillOptions): Promise<DrillRun> {
  const progress = o.progress ?? (() => undefined);
  await assertMayRecord(o.db);
  const { manifest, month } = await readManifest(o.dir);
  const form = manifestForm(manifest);
  await assertDirectory(o.anchorsDir);
  const manifestSha256 = (await fileFacts(join(o.dir, MANIFEST))).sha256;
  const into = o.into === undefined ? undefined : await targetInto(o.into);

  const startedAt = new Date();
  const state: Drilled = {
    target: into?.describe ?? "none (no throwaway PostgreSQL was started)",
    serverVersion: null,
    bills: 0,
  };
  let verdict: MonthVerdict = { accounts: [], closes: [], unlisted: [], failures: [] };
  try {
    verdict = await drill(o, manifest, month, form, into, state, progress);
  } catch (err) {
    verdict.failures.push({ kind: "error", message: `the drill did not run to its end: ${oneLine(err)}` });
  }
  const outcome: DrillOutcome = {
    month: month.label,
    archiveDir: o.dir,
    manifestSha256,
    anchorsDir: o.anchorsDir,
    target: state.target,
    serverVersion: state.serverVersion,
    digestForm: form,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    outcome: verdict.failures.length === 0 ? "pass" : "fail",
    billsLoaded: state.bills,
    accounts: verdict.accounts,
    closes: verdict.closes,
    closesChecked: verdict.closes.length,
    closesProven: verdict.closes.filter((c) => c.status === "proven").length,
    unlisted: verdict.unlisted,
    failures: verdict.failures,
  };
  try {
    return { outcome, recordId: await recordDrill(o.db, outcome, o.runBy) };
  } catch (err) {
    throw new DrillNotRecorded(outcome, err);
  }
}

interface Drilled {
  target: string;
  serverVersion: string | null;
  bills: number;
}

async function drill(
  o: DrillOptions,
  m: Manifest,
  month: ArchiveMonth,
  form: number,
  into: RestoreTarget | undefined,
  state: Drilled,
  progress: (line: string) => void,
): Promise<MonthVerdict> {
  progress(`checking ${o.dir}: ${m.files.length} files against the manifest`);
  try {
    await verifyFiles(o.dir, m.files);
  } catch (err) {
    if (!(err instanceof ArchiveRefused)) throw err;
    const files: DrillFailure = { kind: "files", period: month.label, message: `${err.message}: nothing was restored` };
    // The anchors are still read and judged (nothing recomputed): a missing one is worth knowing too.
    const anchorsOnly = await judgeMonth(m, month, form, o.anchorsDir, undefined);
    return { ...anchorsOnly, failures: [files, ...anchorsOnly.failures] };
  }
  o.signal?.throwIfAborted();
  const target = into ?? (await o.throwaway(progress));
  state.target = target.describe;
  let client: pg.Client | undefined;
  let db: Db | undefined;
  try {
    o.signal?.throwIfAborted();
    client = new pg.Client({ ...pgConnectionConfig(target.url), application_name: "ledger-sync archive drill" });
    client.on("error", () => undefined);
    await client.connect();
    const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    state.serverVersion = rows[0]!.v;
    const restored = await restoreMonth(client, target.url, o.dir, m, month, progress);
    state.bills = restored.bills;
    o.signal?.throwIfAborted();
    progress("recomputing the month's digests and every listed close from the restored rows");
    db = createDb(target.url, { poolMax: 2 });
    const verdict = await judgeMonth(m, month, form, o.anchorsDir, restored.loaded ? { client, db } : undefined);
    return { ...verdict, failures: [...restored.failures, ...verdict.failures] };
  } finally {
    await db?.$disconnect().catch(() => undefined);
    await client?.end().catch(() => undefined);
    progress(
      into ? `the restored month stays in ${target.describe}` : "stopping and removing the throwaway PostgreSQL",
    );
    // A server that would not stop or a directory left behind does not change what was proven.
    await target.release().catch((err: unknown) => progress(`could not release ${target.describe}: ${oneLine(err)}`));
  }
}

async function assertDirectory(dir: string): Promise<void> {
  const s = await stat(dir).catch(() => undefined);
  if (!s) throw new ArchiveRefused(`--anchors ${dir} does not exist`);
  if (!s.isDirectory()) throw new ArchiveRefused(`--anchors ${dir} is not a directory`);
}

const oneLine = (err: unknown) => (err instanceof Error ? err.message : String(err)).split("\n")[0]!;
