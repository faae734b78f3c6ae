// Our own CSV: every column of `bills`, values exactly as stored (NUMERIC digit for digit, times in
// UTC ISO 8601 with milliseconds, raw the bill's JSON text as the exchange sent it: the bills view's
// payload, byte for byte), written by PostgreSQL's own
// COPY ... CSV: NULL is an empty field, the empty string "", a field holding a comma, a double quote
// or a line break is quoted with its quotes doubled. So the file loads back with
// `COPY bills (<the header's columns>) FROM ... CSV HEADER`.
import { isoUtc } from "../store/bills-read.ts";
import type { ExportFormat } from "./export-format.ts";

const COLUMNS: readonly [name: string, sql: string][] = [
  ["account_name", "account_name"],
  ["bill_id", "bill_id"],
  ["coin", "coin"],
  ["symbol", "symbol"],
  ["business_type", "business_type"],
  ["amount", "amount"],
  ["balance", "balance"],
  ["fill_fee", "fill_fee"],
  ["created_at", isoUtc("created_at")],
  ["created_at_ms", "created_at_ms"],
  ["raw", "payload"],
  ["first_seen_at", isoUtc("first_seen_at")],
  ["last_seen_at", isoUtc("last_seen_at")],
  ["source", "source"],
  ["transfer_reason", "transfer_reason"],
];

export const ledgerCsv: ExportFormat = {
  reads: "every column",
  header: `${COLUMNS.map(([name]) => name).join(",")}\n`,
  lines: () => ({ columns: COLUMNS.map(([, sql]) => sql).join(", "), options: "FORMAT csv" }),
};
