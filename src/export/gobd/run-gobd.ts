// `ledger-sync export --format gobd --out DIR`: one account's bills over [--from, --to) as a GoBD
// "Z3" data set in a new directory: bills.csv and totals.csv, index.xml describing them after the
// GDPdU Beschreibungsstandard with its DTD beside it, procedure.md, and SHA256SUMS over all of them.
// Only reads, in one read-only snapshot (the grant-readonly role can run it). The directory appears
// only complete (out-dir.ts); a bad --out, account, coin or range is an ExportRequestError found
// before any file is written. See docs/export-gobd.md.
import { inLedgerSnapshot, type BillsRange } from "../../store/bills-read.ts";
import { createDb, directPool, type Db } from "../../store/prisma.ts";
import { ExportRequestError } from "../export-errors.ts";
import { writeBillsCsv, type BillsFile } from "./bills-csv.ts";
import type { GobdBooks } from "./books.ts";
import { checkedCloses, type CheckedClose } from "./closes.ts";
import { DTD_NAME, readDtd } from "./dtd.ts";
import { indexXml, type DescribedTable } from "./index-xml.ts";
import { interruptSignal } from "../interrupt.ts";
import { ExportDirectory } from "./out-dir.ts";
import { PROCEDURE, procedureMd } from "./procedure.ts";
import { quarantinedBills, type QuarantinedBills } from "./quarantine.ts";
import { rangeEnds, resolveRange, type GobdRangeRequest } from "./range.ts";
import { SHA256SUMS, sha256sums } from "./sha256sums.ts";
import { snapshotDb } from "./snapshot-db.ts";
import { BILLS_TABLE, TOTALS_TABLE } from "./tables.ts";
import { checkTotals, coinTotals, totalsAccuracy, totalsCsv, type CoinTotal } from "./totals.ts";

export interface GobdRequest extends GobdRangeRequest {
  databaseUrl: string;
  /** The new directory. */
  out: string;
  /** The statement's and the closes' reads (books.ts). */
  books: GobdBooks;
  /** Bills per page read (default: the exports' 2,000). */
  pageSize?: number;
}

export interface GobdResult {
  account: string;
  bills: number;
  /** The files of the directory, sorted. */
  files: string[];
}

interface Read {
  range: BillsRange;
  bills: BillsFile;
  totals: CoinTotal[];
  closes: CheckedClose[];
  quarantine: QuarantinedBills[];
}

export async function runGobdExport(r: GobdRequest): Promise<GobdResult> {
  if (r.out === "-")
    throw new ExportRequestError("--format gobd writes a directory: give --out DIR (a new or empty one), not stdout");
  rangeEnds(r);
  const dir = await ExportDirectory.create(r.out);
  const interrupt = interruptSignal();
  const signal = interrupt.signal;
  const db = createDb(r.databaseUrl);
  let committed = false;
  try {
    const read = await readBooks(r, db, dir, signal);
    const tables: DescribedTable[] = [
      { spec: BILLS_TABLE, records: read.bills.records, accuracy: read.bills.accuracy },
      { spec: TOTALS_TABLE, records: read.totals.length, accuracy: totalsAccuracy(read.totals) },
    ];
    await dir.write(TOTALS_TABLE.url, totalsCsv(read.totals));
    await dir.write("index.xml", indexXml(read.range, tables));
    await dir.write(DTD_NAME, await readDtd());
    await dir.write(PROCEDURE, procedureMd({ ...read, tables }));
    await dir.write(SHA256SUMS, await sha256sums(dir.partial, await dir.names()));
    signal.throwIfAborted();
    const files = await dir.names();
    await dir.commit();
    committed = true;
    return { account: read.range.account, bills: read.bills.records, files };
  } finally {
    if (!committed) await dir.discard();
    await db.$disconnect();
    interrupt.release();
  }
}

/** bills.csv written, and the totals and closes read, in one snapshot. */
async function readBooks(r: GobdRequest, db: Db, dir: ExportDirectory, signal: AbortSignal): Promise<Read> {
  const client = await directPool(db)!.connect();
  try {
    return await inLedgerSnapshot(client, async () => {
      const range = await resolveRange(client, r);
      const file = await dir.open(BILLS_TABLE.url);
      const bills = await writeBillsCsv(client, range, file, signal, r.pageSize).finally(() => file.close());
      const reader = snapshotDb(client);
      const totals = await coinTotals(r.books, reader, range);
      checkTotals(totals, bills);
      const closes = await checkedCloses(r.books, reader, range);
      const quarantine = await quarantinedBills(client, range);
      signal.throwIfAborted();
      return { range, bills, totals, closes, quarantine };
    });
  } finally {
    // Closed, not pooled: the export is the pool's only use, and no idle socket keeps the process.
    client.release(true);
  }
}
