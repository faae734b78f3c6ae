// Koinly's "Universal" custom CSV, as Koinly's help centre describes it ("How to create a custom CSV
// file with your data"): Date, Sent Amount, Sent Currency, Received Amount, Received Currency, Fee
// Amount, Fee Currency, Net Worth Amount, Net Worth Currency, Label, Description, TxHash. A bill is a
// deposit (received) or a withdrawal (sent). Labels from "What are labels/tags?" and "Futures and
// perpetuals (PNL transactions)": a contract's profit and loss rows carry "realized gain" (Koinly's
// Realized P&L), income "income", expenses "cost"; own transfers no label, so Koinly can pair them.
// Koinly's template writes dates "YYYY-MM-DD HH:mm UTC"; the seconds are kept.
import type { BillMovement } from "../store/bills-read.ts";
import { csvLine } from "./csv.ts";
import type { ExportFormat } from "./export-format.ts";
import { describeBill, sides, taxMovement, type LabelTable } from "./tax-row.ts";
import { koinlyDate } from "./utc-time.ts";

export const KOINLY_LABELS: LabelTable<string> = {
  "own transfer": { in: "", out: "" },
  "trading result": { in: "realized gain", out: "realized gain" },
  income: { in: "income", out: "cost" },
  "profit share": { in: "income", out: "cost" },
  // A follower's deduction and its refund adjust the follower's trading result.
  "copy-trading deduction": { in: "realized gain", out: "realized gain" },
  // A plain deposit or withdrawal, for the user to label.
  "not in the spec": { in: "", out: "" },
};

export const koinly: ExportFormat = {
  reads: "movement",
  header: csvLine([
    "Date",
    "Sent Amount",
    "Sent Currency",
    "Received Amount",
    "Received Currency",
    "Fee Amount",
    "Fee Currency",
    "Net Worth Amount",
    "Net Worth Currency",
    "Label",
    "Description",
    "TxHash",
  ]),
  line(bill: BillMovement): string {
    const m = taxMovement(bill, KOINLY_LABELS);
    if (m === null) return "";
    const { sent, received } = sides(m, bill.coin);
    const noFee = ["", ""];
    const noNetWorth = ["", ""];
    // TxHash holds the bill id: every row can be traced back to its bill.
    const end = [m.label, describeBill(bill), bill.billId];
    return csvLine([koinlyDate(bill.createdAt), ...sent, ...received, ...noFee, ...noNetWorth, ...end]);
  },
};
