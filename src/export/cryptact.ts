// Cryptact's custom file, as Cryptact's help centre describes it ("Custom File for any other
// trades"): Timestamp, Action, Source, Base, Volume, Price, Counter, Fee, FeeCcy, Comment, times
// "YYYY/MM/DD HH:mm:ss" in the zone chosen at upload (choose UTC), every field but Comment required
// (Fee "0" when none), and no ' " or \ anywhere (the comment is cleared of them, and of commas, so
// that no field is ever quoted). Cryptact imports only rows after the latest time already uploaded:
// rows are oldest first. Contract bills follow its section "Derivative Transactions Focusing on
// Increase or Decrease in Margin": a margin increase is BONUS, a decrease LOSS, in the margin coin,
// the price left blank for Cryptact to look up in JPY; a round trip is one row, its net. Transfers
// between one's own accounts are left out: Cryptact says they need not be included, and has no
// action for them. So a Cryptact file sums to the account's result, not to its balance.
import { csvLine } from "./csv.ts";
import type { ExportFormat } from "./export-format.ts";
import { billsText, contractSymbol, taxMovement, TRIP_END_TEXT, type LabelTable, type TaxRow } from "./tax-row.ts";
import { cryptactDate } from "./utc-time.ts";

/** null: the row is left out. */
type Action = "BONUS" | "LOSS" | null;

const MARGIN = { in: "BONUS", out: "LOSS" } as const;

/** Every movement but an own transfer changes the margin, one the spec does not list included. */
export const CRYPTACT_ACTIONS: LabelTable<Action> = {
  "own transfer": { in: null, out: null },
  "trading result": MARGIN,
  income: MARGIN,
  "profit share": MARGIN,
  "copy-trading deduction": MARGIN,
  "not in the spec": MARGIN,
};

const SOURCE = "WEEX";
const FORBIDDEN = /['"\\,\r\n]/g;

function comment(row: TaxRow): string {
  if ("trip" in row.source) {
    const t = row.source.trip;
    const trip = `round trip ${t.symbol} ${t.side} of ${billsText(t.bills)}`;
    return `${trip} to bill ${row.at.billId}: ${TRIP_END_TEXT[t.end]}`;
  }
  const bill = row.source.bill;
  const symbol = contractSymbol(bill.symbol);
  return `${bill.businessType}${symbol === null ? "" : ` ${symbol}`} bill ${bill.billId}`;
}

export const cryptact: ExportFormat = {
  reads: "tax rows",
  header: csvLine(["Timestamp", "Action", "Source", "Base", "Volume", "Price", "Counter", "Fee", "FeeCcy", "Comment"]),
  writer: () => (row: TaxRow) => {
    const m = taxMovement(row, CRYPTACT_ACTIONS);
    if (m === null || m.label === null) return "";
    return csvLine([
      cryptactDate(row.at.createdAt),
      m.label,
      SOURCE,
      row.coin,
      m.quantity,
      "",
      "JPY",
      "0",
      "JPY",
      comment(row).replace(FORBIDDEN, ""),
    ]);
  },
};
