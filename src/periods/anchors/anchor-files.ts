// Anchors: each close's seal written outside the database, to a directory the database's owner
// cannot rewrite (a mount of an object store with a retention lock, a WORM volume, a copy an auditor
// keeps). One file per close, DIR/<account>/<period>.close-<id>.json, holding the anchor record
// (proof-format.ts: the seal's fields and head, with the close's id and time for people), written once
// and never overwritten: a file already there must hold the same bytes. With a time-stamp authority
// (ANCHOR_TSA_URL), the RFC 3161 token over the file's exact bytes goes beside it as `.tsr`
// (`openssl ts -verify -data F.json -in F.json.tsr -token_in -CAfile TSA-CA.pem`).
// docs/design/audit-chain.md.
import { constants } from "node:fs";
import { access, mkdir, open, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  ANCHOR_RECORD_VERSION,
  parseAnchorRecord,
  sealJson,
  type AnchorRecord,
} from "../../verify/proof/proof-format.ts";
import type { StoredSeal } from "../seal-chain.ts";
import { requestTimestamp } from "./timestamp-authority.ts";

/** An anchor that cannot be written or read as one: named by its file. */
export class AnchorError extends Error {
  override name = "AnchorError";
}

/** The account's folder: its name made safe for any file system (no separator, no dot-dot). */
export const accountFolder = (account: string): string => encodeURIComponent(account).replace(/^\./, "%2E");

/**
 * The account whose folder is named `folder` (accountFolder's inverse), or undefined when no account's
 * folder has that name: it does not decode, or decodes to a name that is written otherwise.
 */
export function folderAccount(folder: string): string | undefined {
  let account: string;
  try {
    account = decodeURIComponent(folder);
  } catch {
    return undefined;
  }
  return account !== "" && accountFolder(account) === folder ? account : undefined;
}

export const anchorPath = (dir: string, s: StoredSeal): string =>
  join(dir, accountFolder(s.fields.account), `${s.fields.period}.close-${s.closeId}.json`);

/** The anchor record's text: fixed key order, one trailing line feed, so re-exports are byte-identical. */
export function anchorText(s: StoredSeal): string {
  const f = s.fields;
  const record = {
    anchor: ANCHOR_RECORD_VERSION,
    close_id: s.closeId,
    closed_at: new Date(f.closedAtMs).toISOString(),
    seal: sealJson(f),
    head: s.head,
  };
  return `${JSON.stringify(record, null, 2)}\n`;
}

export interface WrittenAnchor {
  path: string;
  /** False when the same anchor was there already. */
  written: boolean;
  /** The time-stamp token's file, when a TSA was asked (or one was there). */
  token?: string;
}

/** Writes the seal's anchor (and its token when `tsaUrl` is given), or finds it there unchanged. */
export async function writeAnchor(dir: string, s: StoredSeal, tsaUrl?: string): Promise<WrittenAnchor> {
  const path = anchorPath(dir, s);
  const text = anchorText(s);
  await mkdir(join(dir, accountFolder(s.fields.account)), { recursive: true }).catch((err: unknown) => {
    throw new AnchorError(`cannot make the anchors' directory under ${dir}: ${(err as Error).message}`);
  });
  const written = await writeOnce(path, Buffer.from(text, "utf8"));
  if (tsaUrl === undefined) return { path, written };
  const tokenPath = `${path}.tsr`;
  if (!written && (await exists(tokenPath))) return { path, written, token: tokenPath };
  const { token } = await requestTimestamp(tsaUrl, Buffer.from(text, "utf8"));
  await writeOnce(tokenPath, token, true);
  return { path, written, token: tokenPath };
}

/**
 * Creates `path` with `bytes`, durably (fsync), failing if it exists with other bytes; true when
 * written, false when it held these very bytes already. `anyTwin`: any existing file is kept (a
 * token: two tokens of the same record differ, both valid).
 */
async function writeOnce(path: string, bytes: Buffer, anyTwin = false): Promise<boolean> {
  let file;
  try {
    file = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o444);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new AnchorError(`cannot write ${path}: ${String(err)}`);
    if (anyTwin || (await readFile(path)).equals(bytes)) return false;
    throw new AnchorError(
      `${path} exists and holds another anchor: an anchor is never overwritten ` +
        "(the close it names was sealed otherwise: `ledger-sync verify --anchors` tells which)",
    );
  }
  try {
    await file.writeFile(bytes);
    await file.sync();
  } finally {
    await file.close();
  }
  return true;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

export interface ReadAnchor {
  path: string;
  record: AnchorRecord;
}

/** The account's anchors in `dir` (none when its folder is missing); a file that is not one is an error. */
export async function readAnchors(dir: string, account: string): Promise<ReadAnchor[]> {
  const folder = join(dir, accountFolder(account));
  const names = await readdir(folder).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [] as string[];
    throw new AnchorError(`cannot read the anchors in ${folder}: ${err.message}`);
  });
  const anchors: ReadAnchor[] = [];
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const path = join(folder, name);
    let json: unknown;
    try {
      json = JSON.parse(await readFile(path, "utf8"));
    } catch (err) {
      throw new AnchorError(`${path} is not an anchor record: ${(err as Error).message}`);
    }
    try {
      anchors.push({ path, record: parseAnchorRecord(json) });
    } catch (err) {
      throw new AnchorError(`${path}: ${(err as Error).message}`);
    }
  }
  return anchors;
}

/**
 * The folders directly under the anchors directory `dir`, sorted: one per account anchored there.
 * Files beside them are not anchors (those are written into an account's folder) and are left out.
 */
export async function anchorFolders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    throw new AnchorError(`cannot read the anchors directory ${dir}: ${err.message}`);
  });
  const folders: string[] = [];
  for (const e of entries) {
    // A folder reached through a link counts as one (a mounted or synced copy may be made of links).
    const folder = e.isDirectory() || (e.isSymbolicLink() && (await isDirectory(join(dir, e.name))));
    if (folder) folders.push(e.name);
  }
  return folders.sort();
}

const isDirectory = (path: string) =>
  stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
