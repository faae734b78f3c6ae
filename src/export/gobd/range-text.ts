// The export's range in words, the same in index.xml and procedure.md.
import type { BillsRange } from "../../store/bills-read.ts";

export const isoOf = (ms: number): string => new Date(ms).toISOString();

/** `account "main", from 2026-01-01T00:00:00.000Z (included) to 2026-02-01T00:00:00.000Z (excluded), UTC`. */
export function rangeText(range: BillsRange): string {
  return (
    `account "${range.account}", from ${isoOf(range.fromMs)} (included) to ${isoOf(range.toMs)} (excluded), UTC` +
    `${range.coin === undefined ? "" : `, coin ${range.coin} only`}`
  );
}
