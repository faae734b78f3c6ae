// What every export format is: an optional header line, then lines. A tax tool's format writes a
// line per tax row (a bill of its own or a netted round trip, tax-rows.ts), through a writer made
// fresh for each export (a format may carry state from row to row); our own formats have a line per
// bill, every column, which PostgreSQL writes (copy-pages.ts). Lines end with "\n"; "" is no line.
import type { BillsRange } from "../store/bills-read.ts";
import type { TaxRow } from "./tax-row.ts";

/** A line per bill as `COPY (SELECT <columns> FROM bills ...) TO STDOUT WITH (<options>)` writes it. */
export interface CopiedLines {
  columns: string;
  options: string;
}

export type ExportFormat =
  | { reads: "tax rows"; header: string; writer(): (row: TaxRow) => string }
  | { reads: "every column"; header: string; lines(range: BillsRange): CopiedLines };
