// Cryptact's custom file, as Cryptact's help centre describes it ("Custom File for any other
// trades"): Timestamp, Action, Source, Base, Volume, Price, Counter, Fee, FeeCcy, Comment, times
// "YYYY/MM/DD HH:mm:ss" in the zone chosen at upload (choose UTC), every field but Comment required
// (Fee "0" when none), and no ' " or \ anywhere (the comment is cleared of them, and of commas, so
// that no field is ever quoted). Contract bills follow its section "Derivative Transactions Focusing
// on Increase or Decrease in Margin": a margin increase is BONUS, a decrease LOSS, in the margin
// coin, the price left blank for Cryptact to look up in JPY. Transfers between one's own accounts
// are left out: Cryptact says they need not be included, and has no action for them. So a Cryptact
// file sums to the account's result, not to its balance.
import type { BillMovement } from "../store/bills-read.ts";
import { csvLine } from "./csv.ts";
import type { ExportFormat } from "./export-format.ts";
import { taxMovement, type LabelTable } from "./tax-row.ts";
import { cryptactDate } from "./utc-time.ts";

/** null: the bill has no row. */
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

export const cryptact: ExportFormat = {
  reads: "movement",
  header: csvLine(["Timestamp", "Action", "Source", "Base", "Volume", "Price", "Counter", "Fee", "FeeCcy", "Comment"]),
  line(bill: BillMovement): string {
    const m = taxMovement(bill, CRYPTACT_ACTIONS);
    if (m === null || m.label === null) return "";
    const symbol = bill.symbol === "" ? "" : ` ${bill.symbol}`;
    const comment = `${bill.businessType}${symbol} bill ${bill.billId}`.replace(FORBIDDEN, "");
    return csvLine([
      cryptactDate(bill.createdAt),
      m.label,
      SOURCE,
      bill.coin,
      m.quantity,
      "",
      "JPY",
      "0",
      "JPY",
      comment,
    ]);
  },
};
