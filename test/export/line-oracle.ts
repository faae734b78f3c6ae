// The reference for our own formats' lines: each bill read as text (every column, as PostgreSQL
// prints it) and rendered in JavaScript, as the export did before PostgreSQL wrote its lines
// (JSON.stringify for every JSON string, copyCsvField for every CSV field). The export must give the
// same bytes for any books.
import type pg from "pg";
import { csvField } from "../../src/export/csv.ts";
import type { BillMovement, BillsRange } from "../../src/store/bills-read.ts";

interface TextBill extends BillMovement {
  accountName: string;
  balance: string;
  raw: string;
  firstSeenAt: string;
  lastSeenAt: string;
  source: string;
  transferReason: string | null;
}

/**
 * A field as PostgreSQL's COPY ... CSV writes it, so that NULL and the empty string stay apart:
 * NULL is nothing, the empty string is "" (and a file loads back with COPY ... CSV HEADER).
 */
export function copyCsvField(value: string | null): string {
  if (value === null) return "";
  return value === "" ? '""' : csvField(value);
}

const text = (value: string | null) => (value === null ? "null" : JSON.stringify(value));

const jsonlLine = (b: TextBill) =>
  `{"account_name":${text(b.accountName)},"bill_id":${text(b.billId)},"coin":${text(b.coin)},` +
  `"symbol":${text(b.symbol)},"business_type":${text(b.businessType)},"amount":${text(b.amount)},` +
  `"balance":${text(b.balance)},"fill_fee":${text(b.fillFee)},` +
  `"created_at":${text(b.createdAt)},"created_at_ms":${text(b.createdAtMs)},"raw":${b.raw.replace(/[\n\r]/g, " ")},` +
  `"first_seen_at":${text(b.firstSeenAt)},"last_seen_at":${text(b.lastSeenAt)},"source":${text(b.source)},` +
  `"transfer_reason":${text(b.transferReason)}}\n`;

const CSV_ORDER: readonly (keyof TextBill)[] = [
  "accountName",
  "billId",
  "coin",
  "symbol",
  "businessType",
  "amount",
  "balance",
  "fillFee",
  "createdAt",
  "createdAtMs",
  "raw",
  "firstSeenAt",
  "lastSeenAt",
  "source",
  "transferReason",
];

const csvLine = (b: TextBill) => `${CSV_ORDER.map((key) => copyCsvField(b[key])).join(",")}\n`;

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The range's lines as the reference renders them, in ledger order, and how many bills. */
export async function oracleLines(
  client: pg.ClientBase,
  range: BillsRange,
  format: "jsonl" | "ledger-csv",
): Promise<{ text: string; bills: number }> {
  const { rows } = await client.query<TextBill>(
    `SELECT account_name AS "accountName", bill_id AS "billId", coin, symbol, business_type AS "businessType",
       amount::text AS amount, balance::text AS balance, fill_fee::text AS "fillFee",
       ${iso("created_at")} AS "createdAt", created_at_ms::text AS "createdAtMs", payload AS raw,
       ${iso("first_seen_at")} AS "firstSeenAt", ${iso("last_seen_at")} AS "lastSeenAt",
       source, transfer_reason AS "transferReason"
     FROM bills
     WHERE account_name = $1 AND created_at_ms >= $2::bigint AND created_at_ms < $3::bigint
       AND ($4::text IS NULL OR coin = $4)
     ORDER BY created_at, bill_id::numeric`,
    [range.account, String(range.fromMs), String(range.toMs), range.coin ?? null],
  );
  return { text: rows.map(format === "jsonl" ? jsonlLine : csvLine).join(""), bills: rows.length };
}
