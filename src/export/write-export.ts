// Streams an export: the format's header, then each bill's line, page by page in ledger order, into
// a writable stream. Memory stays flat whatever the size: one page of bills is held at a time, and
// pipeline() waits for the stream to drain before it asks for the next page (back-pressure).
import type { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type pg from "pg";
import {
  EVERY_COLUMN,
  ledgerPages,
  MOVEMENT_COLUMNS,
  type BillMovement,
  type BillsRange,
  type Selection,
} from "../store/bills-read.ts";
import type { ExportFormat } from "./export-format.ts";

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
  /** Bills read from the range. */
  bills: number;
  /** Data lines written (a format may have no line for some bills). */
  lines: number;
}

export const EXPORT_PAGE_SIZE = 2000;

export async function writeExport(o: ExportRun): Promise<ExportTotals> {
  const totals: ExportTotals = { bills: 0, lines: 0 };
  const pageSize = o.pageSize ?? EXPORT_PAGE_SIZE;
  async function* chunksOf<Row extends BillMovement>(selection: Selection<Row>, line: (bill: Row) => string) {
    for await (const page of ledgerPages(o.client, o.range, pageSize, selection)) {
      o.signal.throwIfAborted();
      let chunk = "";
      for (const bill of page) {
        const text = line(bill);
        if (text !== "") totals.lines++;
        chunk += text;
      }
      totals.bills += page.length;
      o.onPage?.(totals.bills);
      if (chunk !== "") yield chunk;
    }
  }
  const format = o.format;
  async function* chunks() {
    if (format.header !== "") yield format.header;
    if (format.reads === "movement") yield* chunksOf(MOVEMENT_COLUMNS, (bill) => format.line(bill));
    else yield* chunksOf(EVERY_COLUMN, (bill) => format.line(bill));
  }
  try {
    // The signal also stops a write that waits on a stalled reader of stdout.
    await pipeline(chunks, o.out, { end: o.end, signal: o.signal });
  } catch (err) {
    throw o.signal.aborted ? o.signal.reason : err;
  }
  return totals;
}
