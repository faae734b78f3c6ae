// Our own CSV: every column of `bills`, values exactly as stored (NUMERIC digit for digit, times in
// UTC ISO 8601 with milliseconds, raw the bill's JSON text as the exchange sent it: the bills view's
// payload, byte for byte), as PostgreSQL's COPY ... CSV writes them: NULL is an empty field, the
// empty string "", a field holding a comma, a double quote or a line break is quoted with its quotes
// doubled. So the file loads back with `COPY bills (<the header's columns>) FROM ... CSV HEADER`.
// The lines are put together from each bill's values as sent (bill-values.ts).
import { BillValues, renderedLines, TimeColumn, V } from "./bill-values.ts";
import { csvField } from "./csv.ts";
import type { ExportFormat } from "./export-format.ts";
import type { LineBytes } from "./line-bytes.ts";

const HEADER = [
  "account_name",
  "bill_id",
  "coin",
  "symbol",
  "business_type",
  "amount",
  "balance",
  "fill_fee",
  "created_at",
  "created_at_ms",
  "raw",
  "first_seen_at",
  "last_seen_at",
  "source",
  "transfer_reason",
];

const QUOTE = 0x22;
const COMMA = 0x2c;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const NOTHING = Buffer.alloc(0);

/** Bytes `from`..`to` of `bytes` as COPY ... CSV writes a text that is not NULL. */
function csvText(out: LineBytes, bytes: Buffer, from: number, to: number): void {
  let quoted = from === to;
  for (let k = from; k < to && !quoted; k++) {
    const c = bytes[k]!;
    quoted = c === COMMA || c === QUOTE || c === LINE_FEED || c === CARRIAGE_RETURN;
  }
  if (!quoted) return out.copy(bytes, from, to);
  out.byte(QUOTE);
  let run = from;
  for (let k = from; k < to; k++) {
    if (bytes[k] !== QUOTE) continue;
    out.copy(bytes, run, k + 1);
    out.byte(QUOTE);
    run = k + 1;
  }
  out.copy(bytes, run, to);
  out.byte(QUOTE);
}

function lineWriter(account: string) {
  const accountField = Buffer.from(account === "" ? '""' : csvField(account), "utf8");
  return (v: BillValues) => {
    const [created, firstSeen, lastSeen] = [0, 1, 2].map(() => new TimeColumn("", "", NOTHING)) as [
      TimeColumn,
      TimeColumn,
      TimeColumn,
    ];
    /** A text value: nothing for NULL. */
    const text = (i: number) => {
      if (!v.isNull(i)) csvText(v.out, v.row.bytes, v.start(i), v.end(i));
    };
    const present = (i: number) => {
      v.present(i);
      text(i);
    };
    return () => {
      const o = v.out;
      o.put(accountField);
      o.byte(COMMA);
      present(V.bill_id);
      o.byte(COMMA);
      present(V.coin);
      o.byte(COMMA);
      text(V.symbol);
      o.byte(COMMA);
      present(V.business_type);
      o.byte(COMMA);
      present(V.amount);
      o.byte(COMMA);
      present(V.balance);
      o.byte(COMMA);
      present(V.fill_fee);
      o.byte(COMMA);
      v.time(created, V.created_at);
      if (created.ms === null) v.refuse("created_at is infinite");
      o.byte(COMMA);
      o.integer(created.ms);
      o.byte(COMMA);
      present(V.raw);
      o.byte(COMMA);
      v.time(firstSeen, V.first_seen_at);
      o.byte(COMMA);
      v.time(lastSeen, V.last_seen_at, firstSeen);
      o.byte(COMMA);
      present(V.source);
      o.byte(COMMA);
      text(V.transfer_reason);
      o.byte(LINE_FEED);
    };
  };
}

export const ledgerCsv: ExportFormat = {
  reads: "every column",
  header: `${HEADER.join(",")}\n`,
  lines: (range) => renderedLines(lineWriter(range.account)),
};
