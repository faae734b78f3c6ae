// Section 4 of the audit report: every close of the period, first to last, with what each says of
// itself (who, when, the digest, the roll-forward and the reason it was accepted untied), why it
// superseded the one before (the bills whose sealed lines differ: period_close_bills of both), its
// seal in the account's chain (close_seals, and whether its fields still hash to its head), and the
// period's bills now against the current close.
import type { Db } from "../../store/prisma.ts";
import { currentCloses } from "../close-store.ts";
import { periodDigest } from "../digest.ts";
import { diffClosedPeriod } from "../period-diff.ts";
import { headMatches, sealsSql, toAccountSeals, type SealRow } from "../seal-chain.ts";
import { BILL_IDS_SHOWN, type AuditBillIds, type AuditClose, type AuditReport } from "./report.ts";
import { compareIds } from "./revisions.ts";

interface CloseRow {
  id: string;
  closed_at: Date;
  closed_by: string;
  db_user: string;
  bill_count: number;
  digest: string;
  supersedes: string | null;
  superseded_by: string | null;
  rollforward: string | null;
  untied_reason: string | null;
}

export async function readCloses(
  db: Db,
  account: string,
  period: { fromMs: number; toMs: number },
): Promise<AuditReport["closes"]> {
  const rows = await db.$queryRawUnsafe<CloseRow[]>(
    `SELECT c.id::text AS id, c.closed_at, c.closed_by, c.db_user, c.bill_count, c.digest,
            c.supersedes::text AS supersedes, n.id::text AS superseded_by, c.rollforward->>'status' AS rollforward,
            c.untied_reason
     FROM period_closes c
     LEFT JOIN period_closes n ON n.account_name = c.account_name AND n.supersedes = c.id
     WHERE c.account_name = $1 AND c.period_start_ms = $2::bigint AND c.period_end_ms = $3::bigint
     ORDER BY c.id`,
    account,
    String(period.fromMs),
    String(period.toMs),
  );
  if (rows.length === 0) return { rows: [], now: null };
  const seals = toAccountSeals(await db.$queryRawUnsafe<SealRow[]>(sealsSql("$1::text"), account)).seals;
  const closes: AuditClose[] = [];
  for (const r of rows) {
    const seal = seals.find((s) => s.closeId === r.id);
    closes.push({
      id: r.id,
      closedAt: r.closed_at.toISOString(),
      closedBy: r.closed_by,
      dbUser: r.db_user,
      bills: r.bill_count,
      digest: r.digest,
      supersedes: r.supersedes,
      supersededBy: r.superseded_by,
      rollForward: r.rollforward,
      untiedReason: r.untied_reason,
      changesSince: r.supersedes === null ? null : await sealedChanges(db, account, r.supersedes, r.id),
      seal: seal
        ? {
            head: seal.head,
            previousHead: seal.fields.previous,
            merkleRoot: seal.fields.merkleRoot,
            intact: headMatches(seal),
          }
        : null,
    });
  }
  return { rows: closes, now: await periodNow(db, account, period) };
}

/** The bills whose sealed line differs between two closes of one period. */
async function sealedChanges(db: Db, account: string, before: string, after: string): Promise<AuditBillIds> {
  const rows = await db.$queryRawUnsafe<{ bill_id: string; change: keyof AuditBillIds["billIds"] }[]>(
    `SELECT coalesce(n.bill_id, o.bill_id) AS bill_id,
            CASE WHEN o.bill_id IS NULL THEN 'added' WHEN n.bill_id IS NULL THEN 'missing' ELSE 'changed' END AS change
     FROM (SELECT bill_id, line_sha256 FROM period_close_bills WHERE account_name = $1 AND close_id = $3::bigint) n
     FULL JOIN (SELECT bill_id, line_sha256 FROM period_close_bills WHERE account_name = $1 AND close_id = $2::bigint) o
       ON o.bill_id = n.bill_id
     WHERE n.line_sha256 IS DISTINCT FROM o.line_sha256`,
    account,
    before,
    after,
  );
  const out: AuditBillIds = { changed: 0, added: 0, missing: 0, billIds: { changed: [], added: [], missing: [] } };
  for (const r of rows.sort((a, b) => compareIds(a.bill_id, b.bill_id))) {
    out[r.change] += 1;
    if (out.billIds[r.change].length < BILL_IDS_SHOWN) out.billIds[r.change].push(r.bill_id);
  }
  return out;
}

/** The period's bills now against its current close: intact, or the bills changed, added or missing since. */
async function periodNow(
  db: Db,
  account: string,
  period: { fromMs: number; toMs: number },
): Promise<AuditReport["closes"]["now"]> {
  const close = (await currentCloses(db, { account, fromMs: period.fromMs, toMs: period.toMs - 1 })).find(
    (c) => c.fromMs === period.fromMs && c.toMs === period.toMs,
  );
  if (!close) return null;
  const now = await periodDigest(db, { account, fromMs: period.fromMs, toMs: period.toMs }, close.form);
  const base = { closeId: close.id, bills: now.bills, digest: now.digest };
  if (now.digest === close.digest)
    return {
      ...base,
      state: "intact",
      changed: 0,
      added: 0,
      missing: 0,
      billIds: { changed: [], added: [], missing: [] },
    };
  const diff = await diffClosedPeriod(db, close, BILL_IDS_SHOWN);
  const ids = (kind: keyof AuditBillIds["billIds"]) => diff.bills.filter((b) => b.change === kind).map((b) => b.billId);
  return {
    ...base,
    state: "changed",
    ...diff.counts,
    billIds: { changed: ids("changed"), added: ids("added"), missing: ids("missing") },
  };
}
