// Our own CSV: every column of `bills`, values exactly as stored (NUMERIC digit for digit, times in
// UTC ISO 8601 with milliseconds, raw as PostgreSQL prints the jsonb), written the way PostgreSQL's
// COPY ... CSV HEADER writes them: NULL is an empty field, the empty string "". So the file loads
// back with `COPY bills (<the header's columns>) FROM ... CSV HEADER`.
import type { ExportBill } from "../store/bills-read.ts";
import { copyCsvField } from "./csv.ts";
import type { ExportFormat } from "./export-format.ts";

const COLUMNS: readonly [string, (b: ExportBill) => string | null][] = [
  ["account_name", (b) => b.accountName],
  ["bill_id", (b) => b.billId],
  ["coin", (b) => b.coin],
  ["symbol", (b) => b.symbol],
  ["business_type", (b) => b.businessType],
  ["amount", (b) => b.amount],
  ["balance", (b) => b.balance],
  ["fill_fee", (b) => b.fillFee],
  ["created_at", (b) => b.createdAt],
  ["created_at_ms", (b) => b.createdAtMs],
  ["raw", (b) => b.raw],
  ["first_seen_at", (b) => b.firstSeenAt],
  ["last_seen_at", (b) => b.lastSeenAt],
  ["source", (b) => b.source],
  ["transfer_reason", (b) => b.transferReason],
];

export const ledgerCsv: ExportFormat = {
  reads: "every column",
  header: `${COLUMNS.map(([name]) => name).join(",")}\n`,
  line: (bill) => `${COLUMNS.map(([, value]) => copyCsvField(value(bill))).join(",")}\n`,
};
