// An export through writeExport into memory: its text and its totals.
import { Writable } from "node:stream";
import type pg from "pg";
import { FORMATS, type FormatName } from "../../src/export/formats.ts";
import { writeExport, type ExportTotals } from "../../src/export/write-export.ts";
import type { BillsRange } from "../../src/store/bills-read.ts";

/** Run it inside `inLedgerSnapshot` on `client`, as runExport does. */
export async function exportOn(
  client: pg.ClientBase,
  range: BillsRange,
  format: FormatName,
  pageSize: number,
): Promise<{ text: string; totals: ExportTotals }> {
  let text = "";
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const signal = new AbortController().signal;
  const totals = await writeExport({ client, range, format: FORMATS[format], out, end: true, signal, pageSize });
  return { text, totals };
}
