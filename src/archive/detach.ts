// `ledger-sync archive detach --month YYYY-MM --out DIR [--confirm]`: writes a closed month of bills to
// DIR/YYYY-MM (the partition's rows in COPY binary and CSV, the keys they name, the closes that seal
// the month, and manifest.json), reads the files back against the manifest, and only with --confirm
// detaches and drops the month's partition, in one transaction that first checks, under a lock that
// keeps writers out, that the partition still holds exactly the rows archived.
//
// "Closed", exactly: every account with a bill in the partition has a current close (one no later
// close supersedes) whose period [period_start_ms, period_end_ms) contains the whole month, and every
// current close of those accounts that overlaps the month still has its digest over the bills as
// stored (what verify's closed-period check proves); the month's own digest, recomputed from the
// partition's rows, equals the digest of each close whose period is exactly the month.
//
// Everything before the drop reads one REPEATABLE READ READ ONLY snapshot: the checks, the digests and
// every file describe the same rows. A failure anywhere leaves the database as it was and removes the
// files this run wrote. An archive already in DIR/YYYY-MM (a run without --confirm) is not rewritten:
// it is checked against its manifest and against the month as stored now, byte for byte, and used.
import { CURRENT_FORM } from "../periods/digest.ts";
import { join } from "node:path";
import pg from "pg";
import { ArchivedMonthOrder, registerArchivedMonth } from "../store/archived-months.ts";
import { pgConnectionConfig } from "../store/pg-config.ts";
import { copyOut } from "./copy-stream.ts";
import { fileFacts, fsyncDirectory, HashSink, verifyFiles, writeFileAtomically } from "./files.ts";
import {
  ARCHIVE_FILE_NAMES,
  ARCHIVE_FILES,
  canonicalJson,
  DIGEST_FORMS,
  FORMAT,
  FORMAT_VERSION,
  MANIFEST,
  manifestText,
  readManifest,
  type ArchiveFileName,
  type Manifest,
  type ManifestAccount,
  type ManifestFile,
} from "./manifest.ts";
import { ArchiveRefused, currentMonthStartMs, iso, parseMonth, type ArchiveMonth } from "./month.ts";
import { archiveLockSql, ownsBillRows, partitionState, quoted, SESSION_SETTINGS } from "./month-sql.ts";
import { existingArchive, NewArchive } from "./archive-dir.ts";
import { readClosedMonth, type MonthState } from "./closed-month.ts";

export interface DetachOptions {
  databaseUrl: string;
  /** "2025-01". */
  month: string;
  /** The archive goes to DIR/<month>. */
  out: string;
  /** Detach and drop the partition once the archive is written and verified. */
  confirm: boolean;
  nowMs?: number;
  /** How long the drop may wait for the locks it needs (default 30 s). */
  lockTimeoutMs?: number;
  /** One line per step, for a human (stderr). */
  progress?: (line: string) => void;
}

export interface DetachOutcome {
  month: string;
  partition: string;
  dir: string;
  /** The archive was already in dir (an earlier run wrote it) and matched the month as stored. */
  reused: boolean;
  manifestSha256: string;
  rows: number;
  accounts: ManifestAccount[];
  files: ManifestFile[];
  /** The partition was detached and dropped: the month's bills are now only in the archive. */
  dropped: boolean;
}

export async function detachMonth(o: DetachOptions): Promise<DetachOutcome> {
  const month = parseMonth(o.month);
  const nowMs = o.nowMs ?? Date.now();
  if (month.toMs > currentMonthStartMs(nowMs))
    throw new ArchiveRefused(
      `--month ${month.label}: the current month or a future one (now is ${iso(nowMs)}): ` +
        "only a month that has ended, and is closed, can be archived",
    );
  const progress = o.progress ?? (() => undefined);
  const dir = join(o.out, month.label);
  const previous = await existingArchive(o.out, dir, month);
  if (previous) {
    progress(`${dir} already holds an archive of ${month.label}: checking its files against its manifest`);
    await verifyFiles(dir, previous.manifest.files);
  }
  const client = new pg.Client({ ...pgConnectionConfig(o.databaseUrl), application_name: "ledger-sync archive" });
  await client.connect();
  try {
    if (o.confirm) {
      const role = await ownsBillRows(client);
      if (!role.owns)
        throw new ArchiveRefused(
          `the database role "${role.role}" does not own bill_rows (its owner is "${role.owner}"): ` +
            "detaching and dropping a partition needs the owner's role (the one that ran `ledger-sync migrate`)",
        );
    }
    const target = previous ? undefined : new NewArchive(dir);
    let state: MonthState;
    let files: ManifestFile[];
    try {
      ({ state, files } = await inSnapshot(client, month, async () => {
        const s = await readClosedMonth(client, month);
        progress(
          `${month.label} is closed for ${s.accounts.length} account(s), ${s.rows} bill(s): ` +
            (target ? `writing ${dir}` : `comparing ${dir} with the month as stored`),
        );
        if (target) await target.open();
        const sinks = (name: ArchiveFileName) => (target ? target.sink(name) : new HashSink());
        return { state: s, files: await produceFiles(client, month, s, sinks, progress) };
      }));
      if (target) {
        await fsyncDirectory(dir);
        progress(`reading ${dir} back against the manifest`);
        await verifyFiles(dir, files);
      }
    } catch (err) {
      await target?.abandon();
      throw err;
    }
    let manifest: Manifest;
    let manifestSha256: string;
    if (previous) {
      assertSameArchive(dir, previous.manifest, state, files);
      manifest = previous.manifest;
      manifestSha256 = (await fileFacts(join(dir, MANIFEST))).sha256;
    } else {
      manifest = {
        format: FORMAT,
        version: FORMAT_VERSION,
        month: month.label,
        partition: month.partition,
        from: iso(month.fromMs),
        to: iso(month.toMs),
        fromMs: month.fromMs,
        toMs: month.toMs,
        rows: state.rows,
        columns: state.columns,
        files,
        accounts: state.accounts,
        writtenAt: iso(nowMs),
        server: state.server,
        digestForm: DIGEST_FORMS[CURRENT_FORM]!,
      };
      try {
        manifestSha256 = (await writeFileAtomically(dir, MANIFEST, manifestText(manifest))).sha256;
        // What was written parses back, strictly, to what was meant.
        const back = await readManifest(dir);
        if (canonicalJson(back.manifest) !== canonicalJson(manifest))
          throw new Error(`${join(dir, MANIFEST)} does not read back as written`);
      } catch (err) {
        await target!.abandon();
        throw err;
      }
    }
    const outcome: DetachOutcome = {
      month: month.label,
      partition: month.partition,
      dir,
      reused: previous !== undefined,
      manifestSha256,
      rows: state.rows,
      accounts: state.accounts,
      files: manifest.files,
      dropped: false,
    };
    if (!o.confirm) return outcome;
    progress(`re-reading ${dir} against the manifest before dropping ${month.partition}`);
    await verifyFiles(dir, manifest.files);
    await dropPartition(client, month, manifest, manifestSha256, o.lockTimeoutMs ?? 30_000);
    return { ...outcome, dropped: true };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function inSnapshot<T>(client: pg.ClientBase, month: ArchiveMonth, work: () => Promise<T>): Promise<T> {
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    await client.query(SESSION_SETTINGS);
    await takeArchiveLock(client, month);
    const result = await work();
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}

export async function takeArchiveLock(client: pg.ClientBase, month: ArchiveMonth): Promise<void> {
  const { rows } = await client.query<{ got: boolean }>(
    `SELECT pg_try_advisory_xact_lock(${archiveLockSql(month)}) AS got`,
  );
  if (!rows[0]!.got)
    throw new ArchiveRefused(`another \`ledger-sync archive\` of ${month.label} is running on this database`);
}

/** Each file's COPY statement (ids are digits from the database, inlined: COPY takes no parameters). */
function fileStatements(month: ArchiveMonth, s: MonthState): Record<ArchiveFileName, string> {
  const part = quoted(month.partition);
  const columns = s.columns.map((c) => quoted(c.name)).join(", ");
  const rows = `SELECT ${columns} FROM ${part} ORDER BY account_id, created_at, bill_id`;
  const ids = s.closes.map((c) => {
    if (!/^[0-9]+$/.test(c.id)) throw new Error(`close id ${c.id} is not digits`);
    return c.id;
  });
  const closeIds = `ARRAY[${ids.join(", ")}]::bigint[]`;
  const csv = "(FORMAT csv, HEADER true)";
  return {
    "bill_rows.bin": `COPY (${rows}) TO STDOUT (FORMAT binary)`,
    "bill_rows.csv": `COPY (${rows}) TO STDOUT ${csv}`,
    "account_keys.csv": `COPY (SELECT id, name FROM account_keys WHERE id IN (SELECT account_id FROM ${part})
      ORDER BY id) TO STDOUT ${csv}`,
    "bill_terms.csv": `COPY (SELECT id, term, json FROM bill_terms
      WHERE id IN (SELECT unnest(ARRAY[coin, symbol, business_type]) FROM ${part}) ORDER BY id) TO STDOUT ${csv}`,
    "bill_forms.csv": `COPY (SELECT id, fmt, sha256 FROM bill_forms WHERE id IN (SELECT form_id FROM ${part})
      ORDER BY id) TO STDOUT ${csv}`,
    "period_closes.csv": `COPY (SELECT * FROM period_closes WHERE id = ANY(${closeIds}) ORDER BY id) TO STDOUT ${csv}`,
    "period_close_bills.csv": `COPY (SELECT * FROM period_close_bills WHERE close_id = ANY(${closeIds})
      ORDER BY close_id, bill_id) TO STDOUT ${csv}`,
  };
}

interface Sink {
  write(chunk: Buffer): boolean;
  drained(): Promise<void>;
  finish(): Promise<{ bytes: number; sha256: string }>;
}

async function produceFiles(
  client: pg.ClientBase,
  month: ArchiveMonth,
  s: MonthState,
  sinkFor: (name: ArchiveFileName) => Sink,
  progress: (line: string) => void,
): Promise<ManifestFile[]> {
  const statements = fileStatements(month, s);
  const files: ManifestFile[] = [];
  for (const name of ARCHIVE_FILE_NAMES) {
    const sink = sinkFor(name);
    const rows = await copyOut(client, statements[name], sink);
    const facts = await sink.finish();
    progress(`  ${name}: ${rows} row(s), ${facts.bytes} bytes, sha256 ${facts.sha256}`);
    files.push({ name, what: ARCHIVE_FILES[name], rows, bytes: facts.bytes, sha256: facts.sha256 });
  }
  const billRows = files.filter((f) => f.name.startsWith("bill_rows."));
  if (billRows.some((f) => f.rows !== s.rows))
    throw new Error(`${month.partition}: COPY wrote ${billRows.map((f) => f.rows).join("/")} rows, not ${s.rows}`);
  return files;
}

/** An archive found in dir must be this month as stored now, file for file. */
function assertSameArchive(dir: string, m: Manifest, s: MonthState, files: ManifestFile[]): void {
  const moveAway = "move it away (or choose another --out) and run again to archive the month as it is now";
  for (const f of files) {
    const listed = m.files.find((x) => x.name === f.name)!;
    if (listed.sha256 !== f.sha256 || listed.bytes !== f.bytes || listed.rows !== f.rows)
      throw new ArchiveRefused(
        `${join(dir, f.name)}: the archive there differs from ${m.month} as stored now ` +
          `(sha256 ${listed.sha256.slice(0, 16)}... archived, ${f.sha256.slice(0, 16)}... now): ${moveAway}`,
      );
  }
  const facts = (x: { rows: number; accounts: ManifestAccount[]; columns: unknown }) =>
    canonicalJson([x.rows, x.accounts, x.columns]);
  if (facts(m) !== facts(s))
    throw new ArchiveRefused(`${join(dir, MANIFEST)}: its accounts, digests or closes differ from now: ${moveAway}`);
}

/**
 * Detaches and drops the month's partition, in one transaction: writers of the month are locked out
 * (SHARE), the rows are hashed again and must be exactly bill_rows.bin, the month is recorded as
 * archived (archived_months, with each coin's last bill), then DETACH and DROP.
 */
async function dropPartition(
  client: pg.ClientBase,
  month: ArchiveMonth,
  manifest: Manifest,
  manifestSha256: string,
  lockTimeoutMs: number,
): Promise<void> {
  const part = quoted(month.partition);
  const archived = manifest.files.find((f) => f.name === "bill_rows.bin")!;
  await client.query("BEGIN");
  try {
    await client.query(`${SESSION_SETTINGS}; SET LOCAL lock_timeout = ${Math.max(1, Math.round(lockTimeoutMs))}`);
    await takeArchiveLock(client, month);
    const state = await partitionState(client, month);
    if (!state.attached) throw new ArchiveRefused(`${month.partition} is gone already: nothing to drop`);
    await client.query(`LOCK TABLE ${part} IN SHARE MODE`);
    const sink = new HashSink();
    const columns = manifest.columns.map((c) => quoted(c.name)).join(", ");
    const rows = await copyOut(
      client,
      `COPY (SELECT ${columns} FROM ${part} ORDER BY account_id, created_at, bill_id) TO STDOUT (FORMAT binary)`,
      sink,
    );
    const now = sink.facts();
    if (rows !== manifest.rows || now.sha256 !== archived.sha256 || now.bytes !== archived.bytes)
      throw new ArchiveRefused(
        `${month.partition} changed since the archive was written (${manifest.rows} rows archived, ${rows} now; ` +
          `sha256 ${archived.sha256.slice(0, 16)}... archived, ${now.sha256.slice(0, 16)}... now): nothing was dropped`,
      );
    await registerArchivedMonth(client, {
      firstDay: month.firstDay,
      label: month.label,
      partition: month.partition,
      rows: manifest.rows,
      manifestSha256,
      accounts: manifest.accounts,
    }).catch((err: unknown) => {
      throw err instanceof ArchivedMonthOrder ? new ArchiveRefused(`${err.message}: nothing was dropped`) : err;
    });
    await client.query(`ALTER TABLE bill_rows DETACH PARTITION ${part}`);
    await client.query(`DROP TABLE ${part}`);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    if ((err as { code?: string }).code === "55P03")
      throw new Error(
        `could not lock ${month.partition} and bill_rows within ${lockTimeoutMs} ms (a long query or a write holds ` +
          "them): nothing was dropped; run again",
      );
    throw err;
  }
}
