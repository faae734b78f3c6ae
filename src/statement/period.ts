// The time range of a statement or a close. Books are kept in UTC, so a period is a UTC calendar
// month; a range given by --from/--to includes its start and excludes its end, so that consecutive
// ranges (one month's end is the next one's start) never count a bill twice.
import { parseInstant } from "../config/index.ts";

export interface Period {
  /** "2026-10" for a calendar month, else "<from> .. <to>" in ISO form. */
  label: string;
  /** First instant included (epoch ms). */
  fromMs: number;
  /** First instant excluded (epoch ms). */
  toMs: number;
}

/** A command-line mistake: the CLI prints it as one line and exits 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

const MONTH = /^(\d{4})-(\d{2})$/;

/** "2026-10" -> [2026-10-01T00:00Z, 2026-11-01T00:00Z). */
export function monthPeriod(text: string): Period {
  const m = MONTH.exec(text.trim());
  const month = m ? Number(m[2]) : 0;
  if (!m || month < 1 || month > 12)
    throw new UsageError(`--period ${text}: must be a calendar month as YYYY-MM (e.g. 2026-10), in UTC`);
  const year = Number(m[1]);
  return { label: m[0], fromMs: Date.UTC(year, month - 1, 1), toMs: Date.UTC(year, month, 1) };
}

function instant(flag: string, text: string): number {
  const ms = parseInstant(text);
  if (ms === undefined)
    throw new UsageError(
      `${flag} ${text}: must be an ISO date or date-time (2026-10-01, 2026-10-01T12:00Z) or epoch milliseconds`,
    );
  return ms;
}

/** The period the flags name: --period, or --from (included) and --to (excluded); exactly one form. */
export function periodFromFlags(o: { period?: string; from?: string; to?: string }): Period {
  const ranged = o.from !== undefined || o.to !== undefined;
  if (o.period !== undefined && ranged) throw new UsageError("give either --period or --from/--to, not both");
  if (o.period !== undefined) return monthPeriod(o.period);
  if (o.from === undefined || o.to === undefined)
    throw new UsageError("give --period YYYY-MM, or both --from and --to");
  const fromMs = instant("--from", o.from);
  const toMs = instant("--to", o.to);
  if (toMs <= fromMs)
    throw new UsageError(
      `--from ${o.from} is not before --to ${o.to} (--from is included, --to excluded: the range would be empty)`,
    );
  return { label: `${iso(fromMs)} .. ${iso(toMs)}`, fromMs, toMs };
}

export const iso = (ms: number): string => new Date(ms).toISOString();
