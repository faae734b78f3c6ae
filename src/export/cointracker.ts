// CoinTracker's CSV, as CoinTracker's help centre describes it ("Convert your transaction history to
// CoinTracker CSV"): exactly the columns Date, Received Quantity, Received Currency, Sent Quantity,
// Sent Currency, Fee Amount, Fee Currency, Tag (no other column may be added), dates
// "MM/DD/YYYY HH:MM:SS" in UTC. A bill is a receive or a send. Tags from "Transaction category
// definitions": a contract's profit and loss "margin gain" / "margin loss", copy-trading deductions
// "margin fee" and their refunds "margin rebate". No tag: own transfers, which CoinTracker pairs
// with the other wallet's side, and other income (an untagged receive is income to CoinTracker).
import type { BillMovement } from "../store/bills-read.ts";
import { csvLine } from "./csv.ts";
import type { ExportFormat } from "./export-format.ts";
import { sides, taxMovement, type LabelTable } from "./tax-row.ts";
import { coinTrackerDate } from "./utc-time.ts";

export const COINTRACKER_TAGS: LabelTable<string> = {
  "own transfer": { in: "", out: "" },
  "trading result": { in: "margin gain", out: "margin loss" },
  income: { in: "", out: "" },
  "profit share": { in: "margin rebate", out: "margin fee" },
  "copy-trading deduction": { in: "margin rebate", out: "margin fee" },
  "not in the spec": { in: "", out: "" },
};

export const cointracker: ExportFormat = {
  reads: "movement",
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
  line(bill: BillMovement): string {
    const m = taxMovement(bill, COINTRACKER_TAGS);
    if (m === null) return "";
    const { received, sent } = sides(m, bill.coin);
    const noFee = ["", ""];
    return csvLine([coinTrackerDate(bill.createdAt), ...received, ...sent, ...noFee, m.label]);
  },
};
