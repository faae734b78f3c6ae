// The range of a coin page: ?from=YYYY-MM-DD&to=YYYY-MM-DD, UTC calendar days, both included (the
// way a date picker reads), as epoch ms [fromMs, toMs) for the queries. Without `to`, the day of the
// coin's latest bill; without `from`, DEFAULT_DAYS days up to `to`. A bad value is a 400 naming it.
import { badRequest } from "./headers.ts";

const DAY_MS = 86_400_000;
export const DEFAULT_DAYS = 90;
/** About ten years: a chart of more days than that has nothing to show a day at a time. */
export const MAX_DAYS = 3660;

export interface DayRange {
  /** First and last day, YYYY-MM-DD. */
  from: string;
  to: string;
  /** [fromMs, toMs): the first day's midnight to the midnight after the last day, UTC. */
  fromMs: number;
  toMs: number;
}

const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Midnight UTC of a YYYY-MM-DD day, or a 400 naming the parameter. */
function parseDay(name: string, value: unknown): number {
  const text = typeof value === "string" ? value : undefined;
  const m = text === undefined ? null : /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  // Date.UTC rolls impossible days over (2026-02-30 is March 2): refuse those.
  if (!m || dayText(ms) !== text)
    throw badRequest(
      `${name} must be one UTC day written YYYY-MM-DD, such as 2026-01-31 ` +
        `(got ${JSON.stringify(Array.isArray(value) ? value : (text ?? ""))})`,
    );
  return ms;
}

/** The range asked for; `latestMs` (the coin's latest bill) places the default. */
export function dayRange(query: { from?: unknown; to?: unknown }, latestMs: number): DayRange {
  const toDay = query.to === undefined ? Math.floor(latestMs / DAY_MS) * DAY_MS : parseDay("to", query.to);
  const fromDay = query.from === undefined ? toDay - (DEFAULT_DAYS - 1) * DAY_MS : parseDay("from", query.from);
  if (fromDay > toDay)
    throw badRequest(`from (${dayText(fromDay)}) must not be after to (${dayText(toDay)}): both days are included`);
  const days = (toDay - fromDay) / DAY_MS + 1;
  if (days > MAX_DAYS) throw badRequest(`the range is ${days} days; at most ${MAX_DAYS} can be shown at once`);
  return { from: dayText(fromDay), to: dayText(toDay), fromMs: fromDay, toMs: toDay + DAY_MS };
}

/** The `points` parameter of the balance endpoint: how many buckets at most. */
export function maxPoints(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !/^[0-9]{1,5}$/.test(value) || Number(value) < 2 || Number(value) > 10_000)
    throw badRequest(`points must be a whole number from 2 to 10000 (got ${JSON.stringify(value)})`);
  return Number(value);
}
