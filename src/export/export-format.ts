// What every export format is: an optional header line, and for each bill its line (or nothing,
// where the format has no row for that kind of bill). Lines end with "\n". A tax tool's format
// reads only a bill's movement; our own formats read every column.
import type { BillMovement, ExportBill } from "../store/bills-read.ts";

interface FormatOf<Row> {
  /** The header line, or "" for a format without one. */
  header: string;
  /** The bill's line, or "" when the format has no row for it. */
  line(bill: Row): string;
}

export type ExportFormat =
  (FormatOf<BillMovement> & { reads: "movement" }) | (FormatOf<ExportBill> & { reads: "every column" });
