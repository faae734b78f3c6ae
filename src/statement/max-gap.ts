// How far from a period's end a collateral snapshot may be and still be the reported figure the
// roll-forward pairs with the closing balance (--max-gap). The farther it is, the more bills between
// the end and the snapshot the comparison leans on; past the limit the coin is unreconcilable.
import { UsageError } from "./period.ts";

/** Default --max-gap: an hour, a dozen snapshot intervals at the default SNAPSHOT_INTERVAL_MS. */
export const DEFAULT_MAX_GAP_MS = 3_600_000;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const GAP = /^(\d+)(ms|s|m|h|d)?$/;

/** "90s", "15m", "2h", "1d", or whole milliseconds ("600000"). */
export function parseMaxGap(text: string): number {
  const m = GAP.exec(text.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[(m[2] ?? "ms") as keyof typeof UNIT_MS] : NaN;
  if (!Number.isSafeInteger(ms))
    throw new UsageError(
      `--max-gap ${text}: must be a whole number of milliseconds or of a unit (90s, 15m, 2h, 1d), at most 2^53 ms`,
    );
  return ms;
}

/** A duration in words: "3m", "31d 2m", "1.5s". */
export function durationText(ms: number): string {
  const parts: string[] = [];
  let rest = Math.abs(ms);
  for (const [unit, size] of [
    ["d", UNIT_MS.d],
    ["h", UNIT_MS.h],
    ["m", UNIT_MS.m],
  ] as const) {
    if (rest >= size) parts.push(`${Math.floor(rest / size)}${unit}`);
    rest %= size;
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest / 1000}s`);
  return parts.join(" ");
}
