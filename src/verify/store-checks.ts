// Checks on the copy's own bookkeeping: nothing sits in quarantine, and the bills cursor is not
// behind by more than the lookback (an older cursor means recent bills may be missing).
import { BILLS_STREAM } from "../streams/bills-core/stream-name.ts";
import type { CheckResult } from "./report.ts";

/** The account's quarantined records grouped by stream and reason, as quarantineGroupsSql gives them. */
export interface QuarantineGroup {
  stream: string;
  reason: string;
  n: number;
  /** A Date, or its JSON text when read through json_agg. */
  first_seen: Date | string;
}

/** SQL of the account's quarantine groups, most first; `account` is the SQL expression of its name. */
export const quarantineGroupsSql = (account: string) =>
  `SELECT stream, reason, count(*)::int AS n, min(first_seen_at) AS first_seen FROM quarantine
   WHERE account_name = ${account}
   GROUP BY stream, reason ORDER BY count(*) DESC, reason`;

/** The check, and the count it read (the worker's quarantined_records gauge reuses it). */
export function checkQuarantine(rows: QuarantineGroup[]): { check: CheckResult; total: number } {
  const total = rows.reduce((n, r) => n + r.n, 0);
  if (total === 0)
    return {
      total,
      check: { check: "quarantine", subject: "account", status: "pass", summary: "quarantine is empty" },
    };
  const top = rows.slice(0, 3).map((r) => `${r.n} ${r.stream}: ${r.reason}`);
  const check: CheckResult = {
    check: "quarantine",
    subject: "account",
    status: "fail",
    summary:
      `${total} record(s) the exchange sent could not be stored ` +
      `(${top.join("; ")}${rows.length > 3 ? "; ..." : ""}): see the quarantine table`,
    details: {
      total,
      byReason: rows.map((r) => ({
        stream: r.stream,
        reason: r.reason,
        count: r.n,
        firstSeenAt: new Date(r.first_seen).toISOString(),
      })),
    },
  };
  return { check, total };
}

export interface CursorLagOptions {
  lookbackMs: number;
  now: number;
  /** verify --to: the range must have been synced through this instant instead of up to now. */
  toMs?: number;
}

/** The bills cursor as sync_state holds it, or undefined when the stream was never synced. */
export interface BillsCursor {
  cursorMs: number;
  updatedAt: Date;
}

/** SQL of the bills cursor's row (cursor_ms as text, updated_at); `account` is the SQL expression of its name. */
export const billsCursorSql = (account: string) =>
  `SELECT cursor_ms::text, updated_at FROM sync_state WHERE account_name = ${account} AND stream = '${BILLS_STREAM}'`;

export function toBillsCursor(row: { cursor_ms: string; updated_at: Date | string } | null): BillsCursor | undefined {
  return row ? { cursorMs: Number(row.cursor_ms), updatedAt: new Date(row.updated_at) } : undefined;
}

/** The check of the cursor as read (verify reads it once, for this and the collateral checks). */
export function checkCursorLag(cursor: BillsCursor | undefined, o: CursorLagOptions): CheckResult {
  const subject = BILLS_STREAM;
  if (!cursor)
    return { check: "cursor-lag", subject, status: "fail", summary: "the bills stream was never synced: no cursor" };
  const cursorMs = cursor.cursorMs;
  const details = {
    cursorMs,
    cursor: new Date(cursorMs).toISOString(),
    lookbackMs: o.lookbackMs,
    lastMovedAt: cursor.updatedAt.toISOString(),
  };
  if (o.toMs !== undefined) {
    const ok = cursorMs >= o.toMs;
    return {
      check: "cursor-lag",
      subject,
      status: ok ? "pass" : "fail",
      summary: ok
        ? `bills synced through ${details.cursor}, past the end of the range`
        : `bills synced only through ${details.cursor}, ` +
          `before the end of the range (${new Date(o.toMs).toISOString()})`,
      details: { ...details, toMs: o.toMs },
    };
  }
  const lagMs = Math.max(0, o.now - cursorMs);
  const ok = lagMs <= o.lookbackMs;
  return {
    check: "cursor-lag",
    subject,
    status: ok ? "pass" : "fail",
    summary:
      `bills synced through ${details.cursor}, ${(lagMs / 1000).toFixed(0)} s ago ` +
      `(${ok ? "within" : "more than"} the lookback of ${(o.lookbackMs / 1000).toFixed(0)} s)`,
    details: { ...details, lagMs },
  };
}
