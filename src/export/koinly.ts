// Koinly's "Universal" custom CSV, as Koinly's help centre describes it ("How to create a custom CSV
// file with your data"): Date, Sent Amount, Sent Currency, Received Amount, Received Currency, Fee
// Amount, Fee Currency, Net Worth Amount, Net Worth Currency, Tag, Description, TxHash, every amount
// with a decimal point. A row is a deposit (received) or a withdrawal (sent). Tags from "What are
// labels/tags?" and "Futures and perpetuals (PNL transactions)": a round trip's net and the other
// results of a contract carry "realized gain" (Koinly's Realized P&L), income "income", expenses
// "cost"; own transfers no tag, so Koinly can pair them. Koinly's template writes dates
// "YYYY-MM-DD HH:mm UTC"; the seconds are kept.
import { withPoint } from "./amount-text.ts";
import { csvLine } from "./csv.ts";
import type { ExportFormat } from "./export-format.ts";
import { describeRow, sides, taxMovement, type LabelTable, type TaxRow } from "./tax-row.ts";
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
  reads: "tax rows",
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
    "Tag",
    "Description",
    "TxHash",
  ]),
  writer: () => (row: TaxRow) => {
    const m = taxMovement(row, KOINLY_LABELS);
    if (m === null) return "";
    const { sent, received } = sides(withPoint(m.quantity), m, row.coin);
    const noFee = ["", ""];
    const noNetWorth = ["", ""];
    // TxHash holds the bill id (a round trip's last close): every row can be traced back to its bill.
    const end = [m.label, describeRow(row), row.at.billId];
    return csvLine([koinlyDate(row.at.createdAt), ...sent, ...received, ...noFee, ...noNetWorth, ...end]);
  },
};
