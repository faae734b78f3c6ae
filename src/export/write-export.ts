// Streams an export: the format's header, then each bill's line rendered from its values (copy-pages.ts),
// or each tax row's (tax-rows.ts), page by page in ledger order, into a writable stream. Memory stays
// flat whatever the size: one page is held at a time (and a tax export's trips under way), and
// pipeline() waits for the stream to drain before it asks for the next page (back-pressure).
import type { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type pg from "pg";
import { ledgerCopy, type BillsRange } from "../store/bills-read.ts";
import { copyPages } from "./copy-pages.ts";
import type { ExportFormat, RenderedLines } from "./export-format.ts";
import type { TaxRow } from "./tax-row.ts";
import { taxRows } from "./tax-rows.ts";

export interface ExportRun {
  client: pg.ClientBase;
  range: BillsRange;
  format: ExportFormat;
  out: Writable;
  /** End `out` when done (false for stdout, which is never ended). */
  end: boolean;
  signal: AbortSignal;
  /** Called after each page with the bills read so far. */
  onPage?: (bills: number) => void;
  pageSize?: number;
}

export interface ExportTotals {
  /** Bills read: the range's (a tax export's: from the account's first bill, see tax-rows.ts). */
  bills: number;
  /** Data lines written (a format may have no line for some bills). */
  lines: number;
}

export const EXPORT_PAGE_SIZE = 2000;

export async function writeExport(o: ExportRun): Promise<ExportTotals> {
  const totals: ExportTotals = { bills: 0, lines: 0 };
  const pageSize = o.pageSize ?? EXPORT_PAGE_SIZE;
  const format = o.format;
  function chunkOf<Row>(rows: Row[], line: (row: Row) => string): string {
    let chunk = "";
    for (const row of rows) {
      const text = line(row);
      if (text !== "") totals.lines++;
      chunk += text;
    }
    return chunk;
  }
  async function* billChunks(lines: RenderedLines) {
    const sql = ledgerCopy(o.range, lines.columns, "FORMAT binary");
    for await (const page of copyPages(o.client, sql, pageSize)) {
      o.signal.throwIfAborted();
      totals.bills += page.rows;
      totals.lines += page.rows;
      o.onPage?.(totals.bills);
      yield lines.render(page);
    }
  }
  async function* taxChunks(line: (row: TaxRow) => string) {
    const onPage = (bills: number) => {
      totals.bills = bills;
      o.onPage?.(bills);
    };
    for await (const rows of taxRows({ client: o.client, range: o.range, pageSize, signal: o.signal, onPage })) {
      const chunk = chunkOf(rows, line);
      if (chunk !== "") yield chunk;
    }
  }
  async function* chunks() {
    if (format.header !== "") yield format.header;
    if (format.reads === "tax rows") yield* taxChunks(format.writer());
    else yield* billChunks(format.lines(o.range));
  }
  try {
    // The signal also stops a write that waits on a stalled reader of stdout.
    await pipeline(chunks, o.out, { end: o.end, signal: o.signal });
  } catch (err) {
    throw o.signal.aborted ? o.signal.reason : err;
  }
  return totals;
}
