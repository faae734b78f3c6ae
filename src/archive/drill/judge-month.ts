// The drill's verdict on a restored month: per account, the month's digest from the restored rows
// against the manifest's; per close the manifest lists, its anchor against the restored rows.
//
// Which closes, and what each must match (from detach.ts): a manifest lists, per account, the closes
// that were current (superseded by no later close) and overlapped the month when it was archived,
// each of which then held over the bills as stored; at least one covers the whole month. So:
// - a close whose period lies within the month is recomputed from the restored rows, in its anchor's
//   canonical line form, and must give the anchor's digest, bill count and Merkle root: "proven";
// - a close whose period reaches beyond the month (a quarter, a --from/--to range) sealed bills this
//   archive does not hold: its digest cannot match the month's bills alone, legitimately. It is
//   reported "beyond-month": its anchor is still checked (self-consistent, this close, the manifest's
//   figures), and the month's part may not hold more bills than it sealed; it is not a failure;
// - an account none of whose proven closes covers the month (its month sealed only by closes reaching
//   beyond it) is a failure, "unproven": the drill re-verified nothing of it, and a pass would say so;
// - a superseded close is never listed (its anchor stays in the anchors directory): an anchor of a
//   listed period whose close the manifest does not list is reported beside the closes, with whether
//   the restored bills give its digest, and is no failure.
import type pg from "pg";
import type { Db } from "../../store/prisma.ts";
import { DIGEST_FORMS, type Manifest, type ManifestAccount, type ManifestClose } from "../manifest.ts";
import type { ArchiveMonth } from "../month.ts";
import {
  anchorInconsistencies,
  readCloseAnchor,
  sealedVsManifest,
  sealedVsRestored,
  unlistedAnchors,
} from "./close-anchor.ts";
import type { AccountResult, CloseResult, Difference, DrillFailure, UnlistedAnchor } from "./drill-types.ts";
import { restoredFigures, restoredMonthDigests } from "./recompute.ts";

export interface MonthVerdict {
  accounts: AccountResult[];
  closes: CloseResult[];
  unlisted: UnlistedAnchor[];
  failures: DrillFailure[];
}

export interface Restored {
  /** On the restore target: a pg client (the month's partition) and a Db (the bills view). */
  client: pg.ClientBase;
  db: Db;
}

const hex = (h: string | null) => (h === null ? "none" : `${h.slice(0, 16)}...`);
const knownForm = (form: number) => DIGEST_FORMS[form] !== undefined;
const within = (c: { fromMs: number; toMs: number }, month: ArchiveMonth) =>
  c.fromMs >= month.fromMs && c.toMs <= month.toMs;
const covers = (c: { fromMs: number; toMs: number }, month: ArchiveMonth) =>
  c.fromMs <= month.fromMs && c.toMs >= month.toMs;

/**
 * The verdict over the restored rows (`restored`; undefined when nothing could be loaded: the anchors
 * are still read and checked, nothing is recomputed).
 */
export async function judgeMonth(
  m: Manifest,
  month: ArchiveMonth,
  form: number,
  anchorsDir: string,
  restored: Restored | undefined,
): Promise<MonthVerdict> {
  const v: MonthVerdict = { accounts: [], closes: [], unlisted: [], failures: [] };
  const digests = restored ? await restoredMonthDigests(restored.client, month, form) : undefined;
  for (const a of m.accounts) {
    const d = digests?.find((x) => x.accountId === a.id);
    const account: AccountResult = {
      id: a.id,
      name: a.name,
      manifest: { bills: a.bills, digest: a.digest },
      restored: digests ? { bills: d?.bills ?? 0, digest: d?.digest ?? "" } : null,
      proven: false,
    };
    if (digests) v.failures.push(...monthFailures(a, d, month));
    const closes: CloseResult[] = [];
    for (const c of a.closes) closes.push(await judgeClose(a, c, month, form, anchorsDir, restored, v.failures));
    account.proven = closes.some((c) => c.status === "proven" && covers(c, month));
    if (restored && !account.proven && closes.every((c) => c.status !== "failed")) {
      const beyond = closes.filter((c) => c.status === "beyond-month").map((c) => `close #${c.closeId} (${c.period})`);
      v.failures.push({
        kind: "unproven",
        account: a.name,
        period: month.label,
        message:
          `account "${a.name}", ${month.label}: no close the restored rows can re-verify covers the month ` +
          `(${beyond.join(", ")} reach beyond it, over bills this archive does not hold): ` +
          "the month is not proven by this archive alone",
      });
    }
    v.accounts.push(account);
    v.closes.push(...closes);
    v.unlisted.push(...(await unlisted(a, month, anchorsDir, restored)));
  }
  if (digests)
    for (const d of digests.filter((x) => !m.accounts.some((a) => a.id === x.accountId)))
      v.failures.push({
        kind: "rows",
        account: d.account,
        period: month.label,
        message:
          `the restored rows hold ${d.bills} bill(s) of account "${d.account}", ` + "which the manifest does not list",
      });
  return v;
}

function monthFailures(
  a: ManifestAccount,
  d: { account: string; bills: number; digest: string } | undefined,
  month: ArchiveMonth,
): DrillFailure[] {
  const got = { bills: d?.bills ?? 0, digest: d?.digest ?? "" };
  const named = { account: a.name, period: month.label };
  const text =
    `account "${a.name}", ${month.label}: the restored rows give ${got.bills} bill(s), sha256 ${hex(got.digest)}; ` +
    `the manifest ${a.bills}, ${hex(a.digest)}`;
  if (d && d.account !== a.name)
    return [{ kind: "rows", ...named, message: `${text} (the rows name its id ${a.id} "${d.account}")` }];
  if (got.bills !== a.bills) return [{ kind: "rows", ...named, message: text }];
  if (got.digest !== a.digest) return [{ kind: "account-digest", ...named, message: text }];
  return [];
}

async function judgeClose(
  a: ManifestAccount,
  c: ManifestClose,
  month: ArchiveMonth,
  manifestForm: number,
  anchorsDir: string,
  restored: Restored | undefined,
  failures: DrillFailure[],
): Promise<CloseResult> {
  const anchor = await readCloseAnchor(anchorsDir, a.name, c);
  const named = `account "${a.name}", ${c.period}, close #${c.id}`;
  const own: DrillFailure[] = [];
  const fail = (kind: DrillFailure["kind"], message: string, differences?: Difference[]) =>
    own.push({
      kind,
      account: a.name,
      period: c.period,
      closeId: c.id,
      message: `${named}: ${message}`,
      ...(differences ? { differences } : {}),
    });
  const form = anchor.found ? anchor.record.seal.form : manifestForm;
  const inMonth = within(c, month);
  let figures: CloseResult["restored"] = null;
  if (!knownForm(form))
    fail("anchor-inconsistent", `its anchor says canonical line form ${form}, which no ledger-sync knows`);
  else if (restored) figures = await restoredFigures(restored.db, a.name, c.fromMs, c.toMs, form);
  if (!anchor.found) fail(anchor.kind, anchor.why);
  else {
    const seal = anchor.record.seal;
    const broken = anchorInconsistencies(anchor, a.name, c);
    if (broken.length > 0)
      fail("anchor-inconsistent", `the anchor ${anchor.path} is no proof of it: ${broken.join("; ")}`);
    const manifestDiff = sealedVsManifest(seal, c);
    if (manifestDiff.length > 0)
      fail(
        "manifest-close",
        `the manifest's entry says ${c.billCount} bill(s), sha256 ${hex(c.digest)}; the anchor sealed ` +
          `${seal.bills}, ${hex(seal.digest)}`,
        manifestDiff,
      );
    if (figures && inMonth) {
      const d = sealedVsRestored(seal, figures);
      if (d.length > 0)
        fail(
          "anchor-mismatch",
          `the restored bills give ${figures.bills} bill(s), sha256 ${hex(figures.digest)}, Merkle root ` +
            `${hex(figures.merkleRoot)}; the anchor sealed ${seal.bills}, ${hex(seal.digest)}, ` +
            `${hex(seal.merkle_root)} ` +
            `(${d.map((x) => x.field).join(", ")} differ${d.length === 1 ? "s" : ""})`,
          d,
        );
    } else if (figures && figures.bills > seal.bills)
      fail(
        "anchor-mismatch",
        `the restored month alone holds ${figures.bills} of its bills, more than the ${seal.bills} it sealed ` +
          "over its whole period",
        [{ field: "bills", anchored: seal.bills, found: figures.bills }],
      );
  }
  failures.push(...own);
  return {
    account: a.name,
    closeId: c.id,
    period: c.period,
    fromMs: c.fromMs,
    toMs: c.toMs,
    status: own.length > 0 || !figures ? "failed" : inMonth ? "proven" : "beyond-month",
    form,
    anchor: anchor.path,
    anchored: anchor.found
      ? {
          digest: anchor.record.seal.digest,
          bills: anchor.record.seal.bills,
          merkleRoot: anchor.record.seal.merkle_root,
          head: anchor.record.head,
        }
      : null,
    restored: figures,
  };
}

async function unlisted(
  a: ManifestAccount,
  month: ArchiveMonth,
  anchorsDir: string,
  restored: Restored | undefined,
): Promise<UnlistedAnchor[]> {
  const found = await unlistedAnchors(
    anchorsDir,
    a.name,
    new Set(a.closes.map((c) => c.period)),
    new Set(a.closes.map((c) => c.id)),
  );
  const out: UnlistedAnchor[] = [];
  for (const u of found) {
    const anchor = await readCloseAnchor(anchorsDir, a.name, { id: u.closeId, period: u.period });
    let matches: boolean | null = null;
    if (anchor.found && restored && knownForm(anchor.record.seal.form)) {
      const s = anchor.record.seal;
      if (within({ fromMs: s.from_ms, toMs: s.to_ms }, month))
        matches = (await restoredFigures(restored.db, a.name, s.from_ms, s.to_ms, s.form)).digest === s.digest;
    }
    out.push({ account: a.name, period: u.period, closeId: u.closeId, path: u.path, matchesRestored: matches });
  }
  return out;
}
