// bills.csv: the range's bills in ledger order, a page at a time (memory stays flat at any size),
// every value the text PostgreSQL prints (NUMERIC digit for digit, ids and milliseconds as digits),
// never a JavaScript number. While writing it keeps what index.xml and the checks need: the records,
// each decimal column's largest scale (its GDPdU Accuracy), and per coin the count, the exact sums
// and the last balance, which totals.csv must equal (totals.ts).
import type { FileHandle } from "node:fs/promises";
import type pg from "pg";
import {
  isoUtc,
  ledgerPages,
  MOVEMENT_COLUMNS,
  type BillMovement,
  type BillsRange,
  type Selection,
} from "../../store/bills-read.ts";
import { ExactSum, scaleOf } from "../exact-sum.ts";
import { EXPORT_PAGE_SIZE } from "../write-export.ts";
import { dateField, record, textField } from "./gobd-csv.ts";
import { BILLS_TABLE, columnsOf } from "./tables.ts";

interface BillRow extends BillMovement {
  balance: string;
  transferReason: string | null;
  source: string;
  firstSeenAt: string;
}

const SELECTION: Selection<BillRow> = {
  columns: `${MOVEMENT_COLUMNS.columns}, balance::text AS balance, transfer_reason AS "transferReason",
  source, ${isoUtc("first_seen_at")} AS "firstSeenAt"`,
};

/** What the written file holds, per coin. */
export interface CoinInFile {
  bills: number;
  amount: ExactSum;
  fillFee: ExactSum;
  /** The coin's last bill in the file (ledger order). */
  last: { billId: string; balance: string };
}

export interface BillsFile {
  records: number;
  /** The largest number of decimals of each decimal column (0 when there are no records). */
  accuracy: { amount: number; balance: number; fill_fee: number };
  coins: Map<string, CoinInFile>;
}

export const BILLS_HEADER = record(columnsOf(BILLS_TABLE).map((c) => textField(c.name)));

function line(b: BillRow): string {
  return record([
    textField(b.billId),
    textField(b.createdAt),
    dateField(b.createdAt),
    b.createdAtMs,
    textField(b.coin),
    textField(b.symbol),
    textField(b.businessType),
    b.amount,
    b.balance,
    b.fillFee,
    textField(b.transferReason),
    textField(b.source),
    textField(b.firstSeenAt),
  ]);
}

/** Writes the header and the range's bills to `file`; run inside the export's snapshot. */
export async function writeBillsCsv(
  client: pg.ClientBase,
  range: BillsRange,
  file: FileHandle,
  signal: AbortSignal,
  pageSize = EXPORT_PAGE_SIZE,
): Promise<BillsFile> {
  const result: BillsFile = {
    records: 0,
    accuracy: { amount: 0, balance: 0, fill_fee: 0 },
    coins: new Map(),
  };
  await file.write(BILLS_HEADER);
  for await (const rows of ledgerPages(client, range, pageSize, SELECTION)) {
    signal.throwIfAborted();
    let text = "";
    for (const b of rows) {
      text += line(b);
      note(result, b);
    }
    await file.write(text);
  }
  signal.throwIfAborted();
  return result;
}

function note(f: BillsFile, b: BillRow): void {
  f.records++;
  const a = f.accuracy;
  [a.amount, a.balance, a.fill_fee] = [
    Math.max(a.amount, scaleOf(b.amount)),
    Math.max(a.balance, scaleOf(b.balance)),
    Math.max(a.fill_fee, scaleOf(b.fillFee)),
  ];
  let coin = f.coins.get(b.coin);
  if (coin === undefined) {
    coin = { bills: 0, amount: new ExactSum(), fillFee: new ExactSum(), last: { billId: "", balance: "" } };
    f.coins.set(b.coin, coin);
  }
  coin.bills++;
  coin.amount.add(b.amount);
  coin.fillFee.add(b.fillFee);
  coin.last = { billId: b.billId, balance: b.balance };
}
