// CoinTracker's CSV, as CoinTracker's help centre describes it ("Convert your transaction history to
// CoinTracker CSV"): exactly the columns Date, Received Quantity, Received Currency, Sent Quantity,
// Sent Currency, Fee Amount, Fee Currency, Tag (no other column may be added), dates
// "MM/DD/YYYY HH:MM:SS" in UTC, quantities of at most 8 decimals (rounded half-even, the remainder
// carried into the coin's next row: carry-rounding.ts). A row is a receive or a send. Tags from
// "Transaction category definitions": a round trip's net and the other results of a contract
// "margin gain" / "margin loss", copy-trading deductions "margin fee" and their refunds "margin
// rebate". No tag: own transfers, which CoinTracker pairs with the other wallet's side, and other
// income (an untagged receive is income to CoinTracker).
import { CarryRounding } from "./carry-rounding.ts";
import { csvLine } from "./csv.ts";
import type { ExportFormat } from "./export-format.ts";
import { sides, taxMovement, type LabelTable, type TaxRow } from "./tax-row.ts";
import { coinTrackerDate } from "./utc-time.ts";

export const COINTRACKER_DECIMALS = 8;

export const COINTRACKER_TAGS: LabelTable<string> = {
  "own transfer": { in: "", out: "" },
  "trading result": { in: "margin gain", out: "margin loss" },
  income: { in: "", out: "" },
  "profit share": { in: "margin rebate", out: "margin fee" },
  "copy-trading deduction": { in: "margin rebate", out: "margin fee" },
  "not in the spec": { in: "", out: "" },
};

export const cointracker: ExportFormat = {
  reads: "tax rows",
  header: csvLine([
    "Date",
    "Received Quantity",
    "Received Currency",
    "Sent Quantity",
    "Sent Currency",
    "Fee Amount",
    "Fee Currency",
    "Tag",
  ]),
  writer: () => {
    const rounding = new CarryRounding(COINTRACKER_DECIMALS);
    return (row: TaxRow) => {
      // A rounded amount keeps its row's sign (carry-rounding.ts), so the tag is the row's own.
      const amount = rounding.round(row.coin, row.amount);
      const m = amount === null ? null : taxMovement({ ...row, amount }, COINTRACKER_TAGS);
      if (m === null) return "";
      const { received, sent } = sides(m.quantity, m, row.coin);
      const noFee = ["", ""];
      return csvLine([coinTrackerDate(row.at.createdAt), ...received, ...sent, ...noFee, m.label]);
    };
  },
};
