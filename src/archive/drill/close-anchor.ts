// A listed close's anchor, read from the anchors directory where `close --anchors` and `anchors
// export` write it (DIR/<account folder>/<period>.close-<id>.json, periods/anchors/anchor-files.ts),
// and judged as verify-proof judges one (verify/proof/check-proof.ts), without a database: its head
// must be the SHA-256 of its seal record, and it must name this close (account, period, range, id).
// Then what it sealed is compared with what the restored rows give, and with the manifest's entry.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { accountFolder } from "../../periods/anchors/anchor-files.ts";
import { sealHead } from "../../periods/seal-record.ts";
import { parseAnchorRecord, sealFieldsOf, type AnchorRecord } from "../../verify/proof/proof-format.ts";
import type { ManifestClose } from "../manifest.ts";
import type { Difference, RangeFigures } from "./drill-types.ts";

export type CloseAnchor =
  | { path: string; found: true; record: AnchorRecord; closeId: unknown }
  | { path: string; found: false; kind: "anchor-missing" | "anchor-unreadable"; why: string };

/** The anchor file of close `id` of the account's `period`. */
export const closeAnchorPath = (dir: string, account: string, period: string, id: string): string =>
  join(dir, accountFolder(account), `${period}.close-${id}.json`);

/** A period label that names a file in the account's folder (no separator, not a dot name). */
const namesAFile = (period: string) => !/[/\\\0]/.test(period) && period !== "." && period !== "..";

export async function readCloseAnchor(
  dir: string,
  account: string,
  c: Pick<ManifestClose, "id" | "period">,
): Promise<CloseAnchor> {
  const path = closeAnchorPath(dir, account, namesAFile(c.period) ? c.period : "?", c.id);
  if (!namesAFile(c.period))
    return { path, found: false, kind: "anchor-missing", why: `the period ${JSON.stringify(c.period)} names no file` };
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT"
      ? { path, found: false, kind: "anchor-missing", why: `no anchor ${path}` }
      : { path, found: false, kind: "anchor-unreadable", why: `${path} cannot be read (${code ?? String(err)})` };
  }
  try {
    const json = JSON.parse(text) as { close_id?: unknown };
    return { path, found: true, record: parseAnchorRecord(json), closeId: json.close_id };
  } catch (err) {
    return {
      path,
      found: false,
      kind: "anchor-unreadable",
      why: `${path} is not an anchor record: ${(err as Error).message}`,
    };
  }
}

/** What makes the anchor no proof of this close: a head that is not its seal's hash, or another close named. */
export function anchorInconsistencies(
  a: { record: AnchorRecord; closeId: unknown },
  account: string,
  c: ManifestClose,
) {
  const problems: string[] = [];
  let head: string | undefined;
  try {
    head = sealHead(sealFieldsOf(a.record.seal));
  } catch (err) {
    problems.push(`its seal has no seal record (${(err as Error).message})`);
  }
  if (head !== undefined && head !== a.record.head)
    problems.push(`its head ${a.record.head} is not the hash of its seal record (${head})`);
  const s = a.record.seal;
  if (s.account !== account) problems.push(`it names account ${JSON.stringify(s.account)}`);
  if (s.period !== c.period) problems.push(`it names period ${JSON.stringify(s.period)}`);
  if (s.from_ms !== c.fromMs || s.to_ms !== c.toMs)
    problems.push(`it seals [${s.from_ms}, ${s.to_ms}), the manifest's close [${c.fromMs}, ${c.toMs})`);
  if (a.closeId !== undefined && String(a.closeId) !== c.id) problems.push(`it names close #${String(a.closeId)}`);
  return problems;
}

/** The sealed figures the restored ones differ in (a seal without a Merkle root: digest and count only). */
export function sealedVsRestored(seal: AnchorRecord["seal"], r: RangeFigures): Difference[] {
  const d: Difference[] = [];
  if (seal.digest !== r.digest) d.push({ field: "digest", anchored: seal.digest, found: r.digest });
  if (seal.bills !== r.bills) d.push({ field: "bills", anchored: seal.bills, found: r.bills });
  if (seal.merkle_root !== null && seal.merkle_root !== r.merkleRoot)
    d.push({ field: "merkle_root", anchored: seal.merkle_root, found: r.merkleRoot });
  return d;
}

/** Where the manifest's entry for the close says otherwise than its anchor. */
export function sealedVsManifest(seal: AnchorRecord["seal"], c: ManifestClose): Difference[] {
  const d: Difference[] = [];
  if (seal.digest !== c.digest) d.push({ field: "manifest digest", anchored: seal.digest, found: c.digest });
  if (seal.bills !== c.billCount) d.push({ field: "manifest bills", anchored: seal.bills, found: c.billCount });
  return d;
}

/**
 * Anchors in the account's folder of one of `periods` whose close the manifest does not list: a close
 * superseded before the month was archived (the manifest lists the current closes only), or one made
 * after the archive was written.
 */
export async function unlistedAnchors(
  dir: string,
  account: string,
  periods: ReadonlySet<string>,
  listed: ReadonlySet<string>,
): Promise<{ period: string; closeId: string; path: string }[]> {
  const folder = join(dir, accountFolder(account));
  const names = await readdir(folder).catch(() => [] as string[]);
  const found: { period: string; closeId: string; path: string }[] = [];
  for (const name of names.sort()) {
    const m = /^(.+)\.close-([1-9][0-9]*)\.json$/.exec(name);
    if (m && periods.has(m[1]!) && !listed.has(m[2]!))
      found.push({ period: m[1]!, closeId: m[2]!, path: join(folder, name) });
  }
  return found;
}
