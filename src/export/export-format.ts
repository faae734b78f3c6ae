// What every export format is: an optional header line, then lines. A tax tool's format writes a
// line per tax row (a bill of its own or a netted round trip, tax-rows.ts), through a writer made
// fresh for each export (a format may carry state from row to row); our own formats have a line per
// bill, every column, read with one binary COPY (copy-pages.ts) and rendered from the values
// PostgreSQL sends (bill-values.ts). Lines end with "\n"; "" is no line.
import type { BillsRange } from "../store/bills-read.ts";
import type { CopyPage } from "./copy-pages.ts";
import type { TaxRow } from "./tax-row.ts";

/** The values `COPY (SELECT <columns> ...) TO STDOUT WITH (FORMAT binary)` sends, a page's lines made of them. */
export interface RenderedLines {
  columns: string;
  render(page: CopyPage): Buffer;
}

export type ExportFormat =
  | { reads: "tax rows"; header: string; writer(): (row: TaxRow) => string }
  | { reads: "every column"; header: string; lines(range: BillsRange): RenderedLines };
