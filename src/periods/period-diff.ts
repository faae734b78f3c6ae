// Which bills of a closed period differ from what its close sealed: each bill's canonical line now
// against the per-bill SHA-256 the close kept (period_close_bills). A bill is `changed` (same id,
// other content: bill_revisions holds the sealed version when the change came through the revision
// path), `added` (a bill filed late, or moved into the period) or `missing` (moved out of the
// period, or removed by someone who switched the audit triggers off).
import { accountKey } from "../store/ledger-rows.ts";
import type { Db } from "../store/prisma.ts";
import { LINE_SHA256, periodLines } from "./digest.ts";
import type { PeriodCloseRow } from "./close-store.ts";

export type BillChangeKind = "changed" | "added" | "missing";

export interface BillChange {
  billId: string;
  change: BillChangeKind;
  /** The bill's creation time now (null: no longer stored). */
  at: string | null;
  /** When ledger-sync first stored the bill (added: after the close means it was filed late). */
  firstSeenAt: string | null;
  /** Changed: the first revision filed after the close (the sealed content), if any. */
  revision: { replacedAt: string; amount: string; balance: string; fillFee: string } | null;
  /** The bill's amount and balance now (null: no longer stored). */
  amount: string | null;
  balance: string | null;
}

export interface PeriodDiff {
  counts: Record<BillChangeKind, number>;
  /** At most `limit` bills of each kind, in bill id order. */
  bills: BillChange[];
}

interface Row {
  bill_id: string;
  change: BillChangeKind;
  of_kind: number;
  at_ms: string | null;
  first_seen_at: Date | null;
  amount: string | null;
  balance: string | null;
  replaced_at: Date | null;
  old_amount: string | null;
  old_balance: string | null;
  old_fill_fee: string | null;
}

export async function diffClosedPeriod(db: Db, close: PeriodCloseRow, limit = 100): Promise<PeriodDiff> {
  const rows = await db.$queryRawUnsafe<Row[]>(
    `WITH now AS (SELECT l.bill_id, ${LINE_SHA256} AS d FROM (${periodLines(close.form)}) l),
     sealed AS (
       SELECT bill_id, line_sha256 AS d FROM period_close_bills WHERE account_name = $1 AND close_id = $4::bigint
     ),
     diff AS (
       SELECT coalesce(n.bill_id, s.bill_id) AS bill_id,
              CASE WHEN s.bill_id IS NULL THEN 'added'
                   WHEN n.bill_id IS NULL THEN 'missing'
                   ELSE 'changed' END AS change
       FROM now n FULL JOIN sealed s ON s.bill_id = n.bill_id
       WHERE n.d IS DISTINCT FROM s.d
     ),
     ranked AS (
       SELECT *, count(*) OVER (PARTITION BY change)::int AS of_kind,
              row_number() OVER (PARTITION BY change ORDER BY bill_id::numeric) AS nth
       FROM diff
     )
     SELECT d.bill_id, d.change, d.of_kind, b.created_at_ms::text AS at_ms, b.first_seen_at,
            b.amount::text AS amount, b.balance::text AS balance,
            r.replaced_at, r.amount::text AS old_amount, r.balance::text AS old_balance,
            r.fill_fee::text AS old_fill_fee
     FROM ranked d
     LEFT JOIN ledger_bills b
       ON b.account_id = ${accountKey("$1")} AND b.bill_key = d.bill_id::numeric AND b.bill_id = d.bill_id
     LEFT JOIN LATERAL (
       SELECT replaced_at, amount, balance, fill_fee FROM bill_revisions
       WHERE account_name = $1 AND bill_id = d.bill_id AND replaced_at >= $5::timestamptz
       ORDER BY replaced_at, id LIMIT 1
     ) r ON d.change = 'changed'
     WHERE d.nth <= $6
     ORDER BY d.change, d.bill_id::numeric`,
    close.account,
    String(close.fromMs),
    String(close.toMs),
    close.id,
    close.closedAt,
    limit,
  );
  const counts: Record<BillChangeKind, number> = { changed: 0, added: 0, missing: 0 };
  for (const r of rows) counts[r.change] = r.of_kind;
  return {
    counts,
    bills: rows.map((r) => ({
      billId: r.bill_id,
      change: r.change,
      at: r.at_ms === null ? null : new Date(Number(r.at_ms)).toISOString(),
      firstSeenAt: r.first_seen_at?.toISOString() ?? null,
      revision:
        r.replaced_at === null
          ? null
          : {
              replacedAt: r.replaced_at.toISOString(),
              amount: r.old_amount!,
              balance: r.old_balance!,
              fillFee: r.old_fill_fee!,
            },
      amount: r.amount,
      balance: r.balance,
    })),
  };
}
