// manifest.json: what an archive of a month holds, written last (so a directory with a manifest is a
// whole archive) and read first. It lists every file with its size and SHA-256, the columns of the
// rows as archived, and per account the bills, the month's digest recomputed from the rows when it
// was written, and the closes (period_closes rows) that sealed the month. Read strictly: an unknown
// field, a missing one or a file name outside the known set is refused by name.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { ArchiveRefused, parseMonth, type ArchiveMonth } from "./month.ts";

export const MANIFEST = "manifest.json";
export const FORMAT = "ledger-sync bill archive";
export const FORMAT_VERSION = 1;

/** The files of an archive, in the order they are written, with what each holds. */
export const ARCHIVE_FILES = {
  "bill_rows.bin": "the month's bill_rows, COPY binary, ordered by account_id, created_at, bill_id",
  "bill_rows.csv": "the same rows, COPY CSV with a header line, same order",
  "account_keys.csv": "the account_keys rows the month's rows name (id, name)",
  "bill_terms.csv": "the bill_terms rows the month's rows name: coins, symbols, business types (id, term, json)",
  "bill_forms.csv": "the bill_forms rows the month's rows name: payload forms (id, fmt, sha256)",
  "period_closes.csv": "the period_closes rows that seal the month, per account (every column)",
  "period_close_bills.csv": "the period_close_bills rows of those closes: each sealed bill's line SHA-256",
} as const;
export type ArchiveFileName = keyof typeof ARCHIVE_FILES;
export const ARCHIVE_FILE_NAMES = Object.keys(ARCHIVE_FILES) as ArchiveFileName[];

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex digits");
const count = z.number().int().nonnegative();
const ms = z.number().int();

const fileEntry = z.strictObject({
  name: z.enum(ARCHIVE_FILE_NAMES),
  what: z.string(),
  rows: count,
  bytes: count,
  sha256: hex64,
});

const closeEntry = z.strictObject({
  id: z.string().regex(/^[1-9][0-9]*$/, "must be a close id"),
  period: z.string(),
  fromMs: ms,
  toMs: ms,
  billCount: count,
  digest: hex64,
});

const accountEntry = z.strictObject({
  id: z.number().int(),
  name: z.string().min(1),
  bills: count,
  digest: hex64,
  closes: z.array(closeEntry).min(1),
});

const manifestSchema = z.strictObject({
  format: z.literal(FORMAT),
  version: z.literal(FORMAT_VERSION),
  month: z.string(),
  partition: z.string(),
  from: z.string(),
  to: z.string(),
  fromMs: ms,
  toMs: ms,
  rows: count,
  columns: z.array(z.strictObject({ name: z.string().min(1), type: z.string().min(1) })).min(1),
  files: z.array(fileEntry),
  accounts: z.array(accountEntry),
  writtenAt: z.string(),
  server: z.string(),
  digestForm: z.string(),
});

export type Manifest = z.infer<typeof manifestSchema>;
export type ManifestFile = Manifest["files"][number];
export type ManifestAccount = Manifest["accounts"][number];
export type ManifestClose = ManifestAccount["closes"][number];

/**
 * How the per-account digest is made, by canonical line form: the close's canonical form over the
 * month's bills. Archives written before form 2 say form 1's text; detach writes the current form's.
 */
export const DIGEST_FORMS: Readonly<Record<number, string>> = {
  1:
    "SHA-256 of the canonical lines of the account's bills of the month, as period_closes.digest " +
    '(docs/schema.md, "The canonical form and the digest")',
  2:
    "SHA-256 of the canonical lines, form 2 (with the payload), of the account's bills of the month, as " +
    'period_closes.digest of a close of form 2 (docs/schema.md, "The canonical form and the digest")',
};

/** The canonical line form of a manifest's per-account digests. */
export function manifestForm(m: Manifest): number {
  const form = Object.entries(DIGEST_FORMS).find(([, text]) => text === m.digestForm)?.[0];
  if (form === undefined)
    throw new ArchiveRefused(
      `the manifest's digestForm is not one this ledger-sync knows (${JSON.stringify(m.digestForm.slice(0, 80))})`,
    );
  return Number(form);
}

/** JSON with every object's keys sorted: equal for equal values, whatever order they were built in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

export function manifestText(m: Manifest): string {
  return `${JSON.stringify(m, null, 2)}\n`;
}

/** The manifest of the archive in `dir`, checked for shape and for agreement with itself. */
export async function readManifest(dir: string): Promise<{ manifest: Manifest; month: ArchiveMonth; text: string }> {
  const isDir = await stat(dir).then(
    (s) => s.isDirectory(),
    () => undefined,
  );
  if (isDir === undefined) throw new ArchiveRefused(`${dir}: no such directory`);
  if (!isDir) throw new ArchiveRefused(`${dir}: not a directory (give the archive's directory, DIR/YYYY-MM)`);
  const path = join(dir, MANIFEST);
  const text = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new ArchiveRefused(
      err.code === "ENOENT"
        ? `${dir}: not an archive (no ${MANIFEST}; give the directory \`archive detach\` wrote, DIR/YYYY-MM)`
        : `${path}: cannot be read (${err.code ?? err.message})`,
    );
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ArchiveRefused(`${path}: does not parse as JSON (${(err as Error).message})`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join(".") : "(top level)";
    throw new ArchiveRefused(`${path}: not a ledger-sync archive manifest: ${where}: ${issue.message}`);
  }
  const manifest = parsed.data;
  const month = parseMonth(manifest.month, `${path}: month`);
  assertConsistent(path, manifest, month);
  return { manifest, month, text };
}

function assertConsistent(path: string, m: Manifest, month: ArchiveMonth): void {
  const bad = (what: string) => new ArchiveRefused(`${path}: ${what}: the manifest does not match itself`);
  if (m.partition !== month.partition)
    throw bad(`partition ${m.partition} is not ${month.label}'s (${month.partition})`);
  if (m.fromMs !== month.fromMs || m.toMs !== month.toMs) throw bad(`fromMs/toMs are not ${month.label}'s bounds`);
  const names = m.files.map((f) => f.name);
  const missing = ARCHIVE_FILE_NAMES.find((n) => !names.includes(n));
  if (missing !== undefined) throw bad(`no entry for ${missing}`);
  if (new Set(names).size !== names.length) throw bad("a file is listed twice");
  const rowsOf = (name: ArchiveFileName) => m.files.find((f) => f.name === name)!.rows;
  if (rowsOf("bill_rows.bin") !== m.rows || rowsOf("bill_rows.csv") !== m.rows)
    throw bad(`rows ${m.rows} differs from the row count of bill_rows.bin or bill_rows.csv`);
  const bills = m.accounts.reduce((n, a) => n + a.bills, 0);
  if (bills !== m.rows) throw bad(`the accounts' bills add up to ${bills}, not rows ${m.rows}`);
  if (new Set(m.accounts.map((a) => a.id)).size !== m.accounts.length) throw bad("an account is listed twice");
  for (const a of m.accounts) {
    if (!a.closes.some((c) => c.fromMs <= month.fromMs && c.toMs >= month.toMs))
      throw bad(`account "${a.name}" has no close covering the month`);
    const outside = a.closes.find((c) => c.toMs <= month.fromMs || c.fromMs >= month.toMs);
    if (outside) throw bad(`close #${outside.id} of account "${a.name}" lies outside the month`);
  }
}
