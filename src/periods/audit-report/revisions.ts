// Section 2 of the audit report: the bills of the period revised after they were first stored. A bill
// is of the period when its stored version or any replaced one was created in it, so a bill whose
// time a revision moved into or out of the month is listed too. Each replacement is one entry: the
// version replaced, the one that replaced it (the next replaced version, or the stored one) and when.
import { accountKey, instantOf } from "../../store/ledger-rows.ts";
import type { Db } from "../../store/prisma.ts";
import { readBillVersions, type BillContent, type BillVersion } from "../../verify/bill-versions.ts";
import type { AuditRevision } from "./report.ts";

const FIELDS: (keyof BillContent)[] = [
  "createdAt",
  "coin",
  "symbol",
  "businessType",
  "amount",
  "balance",
  "fillFee",
  "transferReason",
];

export async function readRevisions(db: Db, account: string, fromMs: number, toMs: number): Promise<AuditRevision[]> {
  const ids = await db.$queryRawUnsafe<{ bill_id: string }[]>(
    `SELECT DISTINCT r.bill_id
     FROM bill_revisions r
     WHERE r.account_name = $1
       AND ((r.created_at >= ${instantOf("$2")} AND r.created_at < ${instantOf("$3")})
            OR EXISTS (SELECT FROM bill_rows b
                       WHERE b.account_id = ${accountKey("$1")} AND b.bill_id = r.bill_id::numeric
                         AND b.created_at >= ${instantOf("$2")} AND b.created_at < ${instantOf("$3")}))`,
    account,
    String(fromMs),
    String(toMs),
  );
  if (ids.length === 0) return [];
  const histories = await readBillVersions(
    db,
    account,
    ids.map((r) => r.bill_id),
  );
  const out: AuditRevision[] = [];
  for (const [billId, h] of histories)
    for (let i = 0; i + 1 < h.versions.length; i++) out.push(revision(billId, h.versions[i]!, h.versions[i + 1]!));
  return out.sort(
    (a, b) => a.replacedAt.localeCompare(b.replacedAt) || compareIds(a.billId, b.billId) || a.version - b.version,
  );
}

function revision(billId: string, old: BillVersion, next: BillVersion): AuditRevision {
  return {
    billId,
    version: old.version,
    heldFrom: old.from,
    replacedAt: old.until!,
    fields: FIELDS.filter((f) => old[f] !== next[f]),
    old: content(old),
    new: content(next),
    newIsCurrent: next.until === null,
  };
}

const content = (v: BillVersion): BillContent => ({
  coin: v.coin,
  symbol: v.symbol,
  businessType: v.businessType,
  amount: v.amount,
  balance: v.balance,
  fillFee: v.fillFee,
  transferReason: v.transferReason,
  createdAt: v.createdAt,
});

/** Bill ids as numbers (digit text of any length). */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
