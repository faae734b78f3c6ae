// totals.csv: per coin, the figures `ledger-sync statement` reports for the same account and range,
// from the statement's own queries (books.ts): the bills counted, amount and fill_fee summed, the
// opening balance (after the coin's last bill before the range, "0" when it has none, as the
// statement writes it) and the closing one. The coins are the statement's: every coin with a bill
// before the range's end, so a coin the range does not move still shows its balance.
//
// The per-type sums are added with export/exact-sum.ts, exact at any number of digits and at the
// largest scale of the terms, as PostgreSQL's sum() writes it. The figures are then checked against
// the records just written to bills.csv (count, sums, last balance): both are read in one snapshot,
// so a difference is a fault in the export, which fails rather than hand over files that disagree.
import type { BillsRange } from "../../store/bills-read.ts";
import type { Db } from "../../store/prisma.ts";
import { ExactSum, scaleOf } from "../exact-sum.ts";
import type { BillsFile } from "./bills-csv.ts";
import type { GobdBooks } from "./books.ts";
import { record, textField } from "./gobd-csv.ts";
import { columnsOf, TOTALS_TABLE } from "./tables.ts";

export interface CoinTotal {
  coin: string;
  bills: number;
  amount: string;
  fillFee: string;
  /** null: the coin had no bill before the range (its opening balance is taken as 0). */
  opening: { billId: string; balance: string } | null;
  closing: { billId: string; balance: string };
}

export async function coinTotals(books: GobdBooks, db: Db, range: BillsRange): Promise<CoinTotal[]> {
  const anchors = await books.anchorRows(db, range.account, range.fromMs, range.toMs);
  const movements = await books.movementRows(db, range.account, range.fromMs, range.toMs);
  return anchors
    .filter((a) => range.coin === undefined || a.coin === range.coin)
    .map((a) => {
      const rows = movements.filter((m) => m.coin === a.coin);
      const amount = new ExactSum();
      const fillFee = new ExactSum();
      for (const m of rows) {
        amount.add(m.amount);
        fillFee.add(m.fill_fee);
      }
      return {
        coin: a.coin,
        bills: rows.reduce((n, m) => n + m.bills, 0),
        amount: amount.text(),
        fillFee: fillFee.text(),
        opening:
          a.opening_bill === null || a.opening_balance === null
            ? null
            : { billId: a.opening_bill, balance: a.opening_balance },
        closing: { billId: a.closing_bill, balance: a.closing_balance },
      };
    });
}

/** Refuses totals that do not describe bills.csv's records: each coin's count, sums and last bill. */
export function checkTotals(totals: CoinTotal[], file: BillsFile): void {
  const fail = (coin: string, what: string) => {
    throw new Error(`GoBD export: totals.csv and bills.csv disagree for coin ${coin}: ${what}`);
  };
  for (const coin of file.coins.keys()) if (!totals.some((t) => t.coin === coin)) fail(coin, "it has no total");
  for (const t of totals) {
    const f = file.coins.get(t.coin);
    // A coin the range does not move closes where it opened.
    const inFile = f
      ? { bills: f.bills, amount: f.amount.text(), fillFee: f.fillFee.text(), closing: f.last }
      : { bills: 0, amount: "0", fillFee: "0", closing: t.opening };
    const stated = { bills: t.bills, amount: t.amount, fillFee: t.fillFee, closing: t.closing };
    if (JSON.stringify(inFile) !== JSON.stringify(stated))
      fail(t.coin, `the file holds ${JSON.stringify(inFile)}, the totals say ${JSON.stringify(stated)}`);
  }
}

export const TOTALS_HEADER = record(columnsOf(TOTALS_TABLE).map((c) => textField(c.name)));

export function totalsCsv(totals: CoinTotal[]): string {
  const lines = totals.map((t) =>
    record([
      textField(t.coin),
      String(t.bills),
      t.amount,
      t.fillFee,
      t.opening?.balance ?? "0",
      textField(t.opening?.billId ?? null),
      t.closing.balance,
      textField(t.closing.billId),
    ]),
  );
  return TOTALS_HEADER + lines.join("");
}

/** Each decimal column's largest number of decimals: its GDPdU Accuracy. */
export function totalsAccuracy(totals: CoinTotal[]): Record<string, number> {
  const most = (values: string[]) => Math.max(0, ...values.map(scaleOf));
  return {
    amount_sum: most(totals.map((t) => t.amount)),
    fill_fee_sum: most(totals.map((t) => t.fillFee)),
    opening_balance: most(totals.map((t) => t.opening?.balance ?? "0")),
    closing_balance: most(totals.map((t) => t.closing.balance)),
  };
}
