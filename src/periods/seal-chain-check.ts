// verify's checks of the closes' hash chain (docs/design/audit-chain.md):
// - `seal-chain`: every close has its seal; each seal's fields (its close's row and its own) hash to
//   its head; the seals form one line from the first (previous = 64 zeros) to one end. A close row
//   rewritten, a close removed, a seal rewritten on its own: each fails here, naming the close.
// - `anchors` (with --anchors DIR or ANCHOR_DIR): every anchor of the account names a seal the
//   database holds, with the same fields and head. A superuser who rewrote a month's bills and its
//   close and seal rows consistently, or deleted a close and closed the month again, leaves an anchor
//   whose head the database no longer has: it fails naming the period. Seals not anchored yet make the
//   check inconclusive (`ledger-sync anchors export` writes them). An account anchored in DIR of which
//   the database holds no seal at all (its closes and seals deleted, its bills too) fails naming it and
//   its anchored periods: verify runs this for every account folder of DIR, visited or not
//   (verify-all.ts, unvisitedAnchorReports).
import type { CheckResult } from "../verify/report.ts";
import { sealJson } from "../verify/proof/proof-format.ts";
import { readAnchors, type ReadAnchor } from "./anchors/anchor-files.ts";
import { headMatches, type AccountSeals, type StoredSeal } from "./seal-chain.ts";
import { GENESIS_HEAD } from "./seal-record.ts";

export const SEAL_CHAIN_CHECK = "seal-chain";
export const ANCHORS_CHECK = "anchors";

const short = (h: string) => `${h.slice(0, 16)}...`;
const named = (s: StoredSeal) => `close #${s.closeId} (${s.fields.period})`;

export function checkSealChain(a: AccountSeals): CheckResult {
  const problems: string[] = [];
  for (const u of a.unsealed) problems.push(`close #${u.closeId} (${u.period}) has no seal`);
  for (const o of a.orphans) problems.push(`a seal (head ${short(o.head)}) names close #${o.closeId}, which is gone`);
  const heads = new Set(a.seals.map((s) => s.head));
  const followed = new Set(a.seals.map((s) => s.fields.previous));
  for (const s of a.seals) {
    if (!headMatches(s))
      problems.push(`${named(s)}: its close row or seal no longer hashes to its head ${short(s.head)} (rewritten)`);
    if (s.fields.previous !== GENESIS_HEAD && !heads.has(s.fields.previous))
      problems.push(`${named(s)} follows a seal that is gone (head ${short(s.fields.previous)}): a close was removed`);
  }
  const firsts = a.seals.filter((s) => s.fields.previous === GENESIS_HEAD);
  if (firsts.length > 1)
    problems.push(`${firsts.length} seals claim to be the first (${firsts.map(named).join(", ")})`);
  const ends = a.seals.filter((s) => !followed.has(s.head));
  if (ends.length > 1) problems.push(`the chain has ${ends.length} ends (${ends.map(named).join(", ")})`);
  const tip = ends.length === 1 ? ends[0]! : undefined;
  if (problems.length > 0)
    return {
      check: SEAL_CHAIN_CHECK,
      subject: "account",
      status: "fail",
      summary: `${problems.length} problem(s) in the closes' seal chain: ${problems.slice(0, 3).join("; ")}`,
      details: { problems },
    };
  if (a.seals.length === 0)
    return { check: SEAL_CHAIN_CHECK, subject: "account", status: "skipped", summary: "no closes yet" };
  return {
    check: SEAL_CHAIN_CHECK,
    subject: "account",
    status: "pass",
    summary: `${a.seals.length} close(s) sealed in one chain, head ${short(tip!.head)} (${named(tip!)})`,
    details: { seals: a.seals.length, head: tip!.head, closeId: tip!.closeId },
  };
}

/** The account's anchors in `dir` against its seals (readSeals', or AccountSeals.seals). */
export async function checkAnchors(seals: readonly StoredSeal[], dir: string, account: string): Promise<CheckResult> {
  let anchors: ReadAnchor[];
  try {
    anchors = await readAnchors(dir, account);
  } catch (err) {
    return {
      check: ANCHORS_CHECK,
      subject: "account",
      status: "fail",
      summary: `the anchors cannot be read: ${(err as Error).message}`,
    };
  }
  const byHead = new Map(seals.map((s) => [s.head, s]));
  const anchoredHeads = new Set<string>();
  const problems: string[] = [];
  for (const { path, record } of anchors) {
    anchoredHeads.add(record.head);
    const seal = byHead.get(record.head);
    const closedAt = new Date(record.seal.closed_at_ms).toISOString();
    const what = `the anchored close of ${record.seal.period} (${path}, closed ${closedAt}, ${short(record.head)})`;
    if (!seal) {
      problems.push(
        `${what} is not in the database: that close, its bills or its seal were rewritten, or it was removed`,
      );
      continue;
    }
    const stored = sealJson(seal.fields);
    const differs = Object.keys(record.seal).filter(
      (k) => record.seal[k as keyof typeof record.seal] !== stored[k as keyof typeof stored],
    );
    if (differs.length > 0) problems.push(`${what}: the database's seal differs in ${differs.join(", ")}`);
  }
  const unanchored = seals.filter((s) => !anchoredHeads.has(s.head));
  if (seals.length === 0 && anchors.length > 0) {
    const periods = [...new Set(anchors.map((x) => x.record.seal.period))].sort();
    return {
      check: ANCHORS_CHECK,
      subject: "account",
      status: "fail",
      summary:
        `account "${account}" has ${anchors.length} close(s) anchored in ${dir} (${periods.join(", ")}) ` +
        "and no seal in the database: its closes and seals were deleted",
      details: { problems, anchors: anchors.length, periods },
    };
  }
  if (problems.length > 0)
    return {
      check: ANCHORS_CHECK,
      subject: "account",
      status: "fail",
      summary: `${problems.length} anchor(s) in ${dir} not matched by the database: ${problems.slice(0, 2).join("; ")}`,
      details: { problems, anchors: anchors.length },
    };
  if (unanchored.length > 0)
    return {
      check: ANCHORS_CHECK,
      subject: "account",
      status: "inconclusive",
      summary:
        `${anchors.length} anchor(s) in ${dir} match the database, but ${unanchored.length} close(s) have none ` +
        `(${unanchored.slice(0, 3).map(named).join(", ")}): nothing outside the database vouches for them; ` +
        "`ledger-sync anchors export` writes them",
      details: { anchors: anchors.length, unanchored: unanchored.map((s) => s.closeId) },
    };
  return {
    check: ANCHORS_CHECK,
    subject: "account",
    status: seals.length === 0 ? "skipped" : "pass",
    summary:
      seals.length === 0
        ? "no closes yet"
        : `every close's seal matches its anchor in ${dir} (${anchors.length} anchor(s))`,
    details: { anchors: anchors.length },
  };
}
