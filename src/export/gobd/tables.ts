// The tables of a GoBD export: each CSV file's columns with their GDPdU type and meaning. One list
// feeds the files' header lines, index.xml and procedure.md, so the three cannot disagree.
export type ColumnKind = "AlphaNumeric" | "Numeric" | "Date";

export interface ColumnSpec {
  name: string;
  kind: ColumnKind;
  description: string;
}

export interface TableSpec {
  /** The file, relative to index.xml. */
  url: string;
  /** The table's name in index.xml (what a ForeignKey's References names). */
  name: string;
  description: string;
  /** The first column, unique in the file. */
  primaryKey: ColumnSpec;
  columns: readonly ColumnSpec[];
  /** Columns whose values are the primary key of another table. */
  foreignKeys: readonly { column: string; references: string }[];
}

const alpha = (name: string, description: string): ColumnSpec => ({ name, kind: "AlphaNumeric", description });
const numeric = (name: string, description: string): ColumnSpec => ({ name, kind: "Numeric", description });

export const BILLS_TABLE: TableSpec = {
  url: "bills.csv",
  name: "bills",
  description:
    "The account's ledger entries (bills) in the range, one record per stored bill, in ledger order " +
    "(created_at_ms, then bill_id as a number), every value as stored (created_date is the day of created_at)",
  primaryKey: alpha(
    "bill_id",
    "The exchange's bill id: decimal digits, unique within the account; text, since ids exceed 2^53",
  ),
  columns: [
    alpha("created_at", "When the exchange created the bill: ISO 8601, UTC, with milliseconds"),
    { name: "created_date", kind: "Date", description: "The UTC calendar day of created_at" },
    numeric("created_at_ms", "created_at as epoch milliseconds, as the exchange sent it"),
    alpha("coin", "The currency of amount, balance and fill_fee (e.g. USDT)"),
    alpha("symbol", "The contract (e.g. cmt_btcusdt); empty for a bill of no contract (deposit, withdrawal, transfer)"),
    alpha("business_type", "The kind of entry as the exchange names it (deposit, position_funding, ...)"),
    numeric("amount", "The signed change of the balance, in coin, exactly as the exchange sent it"),
    numeric("balance", "The balance after the entry, in coin"),
    numeric("fill_fee", "The transaction fee the exchange reported with the entry, in coin"),
    alpha("transfer_reason", "Why a transfer was made, when the exchange says; empty otherwise"),
    alpha(
      "source",
      "The endpoint that first delivered the bill: v2 (/capi/v2/account/bills) or v3 (/capi/v3/account/income)",
    ),
    alpha("first_seen_at", "When ledger-sync first stored the bill: ISO 8601, UTC, with milliseconds"),
  ],
  foreignKeys: [{ column: "coin", references: "totals" }],
};

export const TOTALS_TABLE: TableSpec = {
  url: "totals.csv",
  name: "totals",
  description:
    "Per coin: the bills of the range counted and summed, and the opening and closing balances, " +
    "as `ledger-sync statement` reports them for the same account and range",
  primaryKey: alpha("coin", "The currency"),
  columns: [
    numeric("bills", "How many bills of the coin the range holds (records of bills.csv)"),
    numeric("amount_sum", "The sum of their amount, exact, at the largest scale of the terms"),
    numeric("fill_fee_sum", "The sum of their fill_fee, exact, at the largest scale of the terms"),
    numeric("opening_balance", "The balance after the coin's last bill before the range; 0 when there is none"),
    alpha("opening_bill_id", "That bill's id; empty when the coin had no bill before the range"),
    numeric("closing_balance", "The balance after the coin's last bill before the range's end"),
    alpha("closing_bill_id", "That bill's id"),
  ],
  foreignKeys: [],
};

/** Every column of a table, the primary key first: the order of the file's fields. */
export function columnsOf(table: TableSpec): ColumnSpec[] {
  return [table.primaryKey, ...table.columns];
}
