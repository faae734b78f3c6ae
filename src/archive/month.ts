// The month an archive holds: a UTC calendar month of bill_rows, its partition's name and bounds, and
// the one error kind the archive commands refuse with (the CLI prints its message and exits 2).

/** Bad input or a refusal (not closed, current month, a file that does not match): nothing was changed. */
export class ArchiveRefused extends Error {
  override name = "ArchiveRefused";
}

export interface ArchiveMonth {
  /** "2025-01". */
  label: string;
  /** "bill_rows_2025_01": the partition ledger_sync_bill_month(date) makes for it. */
  partition: string;
  /** First instant included, first instant excluded (epoch ms, UTC). */
  fromMs: number;
  toMs: number;
  /** "2025-01-01", the first day (bill_id_ranges.month, bill_coins.last_month). */
  firstDay: string;
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** "2025-01" -> the month; anything else is refused naming `what` (the flag or the manifest field). */
export function parseMonth(text: string, what = "--month"): ArchiveMonth {
  const m = MONTH.exec(text);
  if (!m) throw new ArchiveRefused(`${what} ${JSON.stringify(text)}: must be a calendar month as YYYY-MM (UTC)`);
  const year = Number(m[1]);
  const month = Number(m[2]);
  return {
    label: m[0],
    partition: `bill_rows_${m[1]}_${m[2]}`,
    fromMs: Date.UTC(year, month - 1, 1),
    toMs: Date.UTC(year, month, 1),
    firstDay: `${m[0]}-01`,
  };
}

/** The first instant of the UTC month holding `nowMs`. */
export function currentMonthStartMs(nowMs: number): number {
  const d = new Date(nowMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export const iso = (ms: number): string => new Date(ms).toISOString();
