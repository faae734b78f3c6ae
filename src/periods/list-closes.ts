// `ledger-sync close --list`: every closed period with the digest that sealed it and its state now,
// `intact` (the bills hash to the sealed digest) or `changed` (how many bills changed, were added or
// went missing; `verify` names them), with its roll-forward's status at close time and the reason it
// was accepted untied, if it was. Read-only.
import { iso } from "../statement/period.ts";
import type { Db } from "../store/prisma.ts";
import { currentCloses } from "./close-store.ts";
import { periodDigest } from "./digest.ts";
import { diffClosedPeriod, type BillChangeKind } from "./period-diff.ts";

export interface ClosedPeriodListing {
  account: string;
  period: string;
  from: string;
  to: string;
  closeId: string;
  closedAt: string;
  closedBy: string;
  dbUser: string;
  /** The close this one superseded (null: the period's first close). */
  supersedes: string | null;
  /** How many times the period was closed. */
  closes: number;
  bills: number;
  digest: string;
  state: "intact" | "changed";
  billsNow: number;
  digestNow: string;
  changes: Record<BillChangeKind, number>;
  /** tied / not tied / unreconcilable when closed; null: closed before the roll-forward existed. */
  rollForward: string | null;
  /** --accept-untied's reason; null when the period closed tied. */
  untiedReason: string | null;
}

export async function listClosedPeriods(db: Db, account?: string): Promise<ClosedPeriodListing[]> {
  const out: ClosedPeriodListing[] = [];
  for (const close of await currentCloses(db, { account })) {
    const now = await periodDigest(db, { account: close.account, fromMs: close.fromMs, toMs: close.toMs }, close.form);
    const intact = now.digest === close.digest;
    out.push({
      account: close.account,
      period: close.period,
      from: iso(close.fromMs),
      to: iso(close.toMs),
      closeId: close.id,
      closedAt: close.closedAt.toISOString(),
      closedBy: close.closedBy,
      dbUser: close.dbUser,
      supersedes: close.supersedes,
      closes: close.closes,
      bills: close.billCount,
      digest: close.digest,
      state: intact ? "intact" : "changed",
      billsNow: now.bills,
      digestNow: now.digest,
      // Counts only: one bill of each kind is enough to carry its kind's count.
      changes: intact ? { changed: 0, added: 0, missing: 0 } : (await diffClosedPeriod(db, close, 1)).counts,
      rollForward: close.rollForward,
      untiedReason: close.untiedReason,
    });
  }
  return out;
}
