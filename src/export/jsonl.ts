// JSON lines: one object per bill, every column of `bills` under its column name. Decimals, the bill
// id and the creation milliseconds are JSON strings (a JSON number would lose digits in most
// readers); raw is the stored jsonb itself, as PostgreSQL prints it, never parsed and re-encoded.
import type { ExportFormat } from "./export-format.ts";

const text = (value: string | null) => (value === null ? "null" : JSON.stringify(value));

export const jsonl: ExportFormat = {
  reads: "every column",
  header: "",
  line: (b) =>
    `{"account_name":${text(b.accountName)},"bill_id":${text(b.billId)},"coin":${text(b.coin)},` +
    `"symbol":${text(b.symbol)},"business_type":${text(b.businessType)},"amount":${text(b.amount)},` +
    `"balance":${text(b.balance)},"fill_fee":${text(b.fillFee)},` +
    `"created_at":${text(b.createdAt)},"created_at_ms":${text(b.createdAtMs)},"raw":${b.raw},` +
    `"first_seen_at":${text(b.firstSeenAt)},"last_seen_at":${text(b.lastSeenAt)},"source":${text(b.source)},` +
    `"transfer_reason":${text(b.transferReason)}}\n`,
};
