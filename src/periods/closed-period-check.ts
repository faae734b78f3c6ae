// verify's check of closed periods: each close's digest recomputed over the bills as stored now. A
// period whose bills changed since it was closed fails, naming the bills that changed, were added
// (a late bill is an auditor's event: stored, never hidden, and reported here until the period is
// closed again) or went missing.
import { iso } from "../statement/period.ts";
import { archivedMonthsOf, type ArchivedAccountMonth } from "../store/archived-months.ts";
import type { Db } from "../store/prisma.ts";
import type { AccountReport, CheckResult } from "../verify/report.ts";
import { currentCloses, type PeriodCloseRow } from "./close-store.ts";
import { periodDigest } from "./digest.ts";
import { diffClosedPeriod, type BillChange } from "./period-diff.ts";

export const CLOSED_PERIOD_CHECK = "closed-period";

export interface ClosedPeriodCheckOptions {
  account: string;
  /** Only periods overlapping [fromMs, toMs] (both included; default: all). */
  fromMs?: number;
  toMs?: number;
  /** Closes to check whatever the range (the worker's: those found changed last time). */
  recheckCloseIds?: string[];
  /** The account's archived months, when the caller has read them already. */
  archived?: ArchivedAccountMonth[];
}

export interface ClosedPeriodDetails {
  closeId: string;
  period: string;
  from: string;
  to: string;
  closedBy: string;
  closedAt: string;
  digest: string;
  digestNow: string;
  billCount: number;
  billCountNow: number;
  changes: Record<BillChange["change"], number>;
  bills: BillChange[];
}

export async function checkClosedPeriods(db: Db, o: ClosedPeriodCheckOptions): Promise<CheckResult[]> {
  const closes = await currentCloses(db, {
    account: o.account,
    fromMs: o.fromMs,
    toMs: o.toMs,
    orIds: o.recheckCloseIds,
  });
  const checks: CheckResult[] = [];
  const archived = closes.length === 0 ? [] : (o.archived ?? (await archivedMonthsOf(db, o.account)));
  for (const close of closes) {
    const sealedBy = `close #${close.id} by ${close.closedBy} at ${close.closedAt.toISOString()}`;
    const month = archived.find((m) => m.fromMs < close.toMs && close.fromMs < m.toMs);
    if (month) {
      checks.push(archivedCloseCheck(close, sealedBy, month));
      continue;
    }
    const now = await periodDigest(db, { account: o.account, fromMs: close.fromMs, toMs: close.toMs }, close.form);
    if (now.digest === close.digest) {
      checks.push({
        check: CLOSED_PERIOD_CHECK,
        subject: close.period,
        status: "pass",
        summary: `${close.billCount} bill(s) as sealed by ${sealedBy} (sha256 ${close.digest.slice(0, 16)}...)`,
        details: { closeId: close.id, digest: close.digest, billCount: close.billCount },
      });
      continue;
    }
    const diff = await diffClosedPeriod(db, close);
    const details: ClosedPeriodDetails = {
      closeId: close.id,
      period: close.period,
      from: iso(close.fromMs),
      to: iso(close.toMs),
      closedBy: close.closedBy,
      closedAt: close.closedAt.toISOString(),
      digest: close.digest,
      digestNow: now.digest,
      billCount: close.billCount,
      billCountNow: now.bills,
      changes: diff.counts,
      bills: diff.bills,
    };
    checks.push({
      check: CLOSED_PERIOD_CHECK,
      subject: close.period,
      status: "fail",
      summary: changedSummary(close, sealedBy, details),
      details,
    });
  }
  return checks;
}

/**
 * A close of an archived month: its bills are in the archive, so the close is checked against what
 * the archive recorded of it (its id and digest, in archived_months), not recomputed.
 */
function archivedCloseCheck(close: PeriodCloseRow, sealedBy: string, m: ArchivedAccountMonth): CheckResult {
  const where = `archive of ${m.label} (manifest sha256 ${m.manifestSha256.slice(0, 16)}...)`;
  const recorded = m.closes.find((c) => c.id === close.id);
  const details = { closeId: close.id, digest: close.digest, billCount: close.billCount, archived: m.label };
  if (recorded && recorded.digest === close.digest && recorded.billCount === close.billCount)
    return {
      check: CLOSED_PERIOD_CHECK,
      subject: close.period,
      status: "pass",
      summary:
        `${close.billCount} bill(s) as sealed by ${sealedBy} (sha256 ${close.digest.slice(0, 16)}...), ` +
        `in the ${where}: the close is the one archived, and attach recomputes its digest`,
      details,
    };
  return {
    check: CLOSED_PERIOD_CHECK,
    subject: close.period,
    status: "fail",
    summary:
      `${sealedBy} (sha256 ${close.digest.slice(0, 16)}..., ${close.billCount} bill(s)) is not a close the ${where} ` +
      `recorded (${m.closes.map((c) => `#${c.id} sha256 ${c.digest.slice(0, 16)}...`).join(", ")}): the period's ` +
      "close changed after its bills were archived",
    details,
  };
}

function changedSummary(close: PeriodCloseRow, sealedBy: string, d: ClosedPeriodDetails): string {
  const c = d.changes;
  const named = d.bills.slice(0, 5).map(describeBill);
  const more = c.changed + c.added + c.missing - named.length;
  return (
    `the bills changed since ${sealedBy}: ${c.changed} changed, ${c.added} added, ${c.missing} missing ` +
    `(${named.join("; ")}${more > 0 ? `; ${more} more: --json lists them` : ""}); ` +
    `sealed sha256 ${d.digest.slice(0, 16)}..., now ${d.digestNow.slice(0, 16)}...; ` +
    `\`ledger-sync close --period ${close.period} --account ${close.account}\` seals the period as it is now`
  );
}

function describeBill(b: BillChange): string {
  if (b.change === "added") return `bill ${b.billId} added (created ${b.at}, first stored ${b.firstSeenAt})`;
  if (b.change === "missing")
    return b.at === null
      ? `bill ${b.billId} missing (no longer stored)`
      : `bill ${b.billId} missing (now dated ${b.at}, outside the period)`;
  return b.revision
    ? `bill ${b.billId} changed (revision filed ${b.revision.replacedAt}: ` +
        `amount ${b.revision.amount} -> ${b.amount}, balance ${b.revision.balance} -> ${b.balance})`
    : `bill ${b.billId} changed (no revision filed since the close: changed outside the revision path)`;
}

const changedChecks = (report: Pick<AccountReport, "checks"> | null | undefined) =>
  (report?.checks ?? []).filter((c) => c.check === CLOSED_PERIOD_CHECK && c.status === "fail");

/** Closed periods a report found changed: the worker's gauge ledger_sync_closed_periods_changed. */
export function changedClosedPeriods(report: Pick<AccountReport, "checks"> | null | undefined): number {
  return changedChecks(report).length;
}

/** The closes a report found changed (a stored report: checked again by the next incremental verify). */
export function changedCloseIds(report: unknown): string[] {
  const checks = (report as Pick<AccountReport, "checks"> | null)?.checks;
  if (!Array.isArray(checks)) return [];
  return changedChecks({ checks })
    .map((c) => (c.details as Partial<ClosedPeriodDetails> | undefined)?.closeId)
    .filter((id): id is string => typeof id === "string");
}
