// JSON lines: one object per bill, every column of `bills` under its column name. Decimals, the bill
// id and the creation milliseconds are JSON strings (a JSON number would lose digits in most
// readers); raw is the bill's JSON text as the exchange sent it (the bills view's payload: byte for
// byte, never parsed and re-encoded), save that a line break between its tokens (JSON text has none
// elsewhere) is written as a space, so that a bill stays one line.
//
// PostgreSQL sends each bill's values in a binary COPY and the lines are put together here, on the
// client's core, while the server reads on: the server's core is what bounds an export, and building
// JSON text there (its quoting, times, and concatenation) was half of its work per bill
// (docs/design/volume-bench.md). Values are copied as the bytes PostgreSQL sent: NUMERIC text digit
// for digit, the payload as stored. A text is a JSON string as JSON.stringify writes it, which is how
// PostgreSQL's to_json() writes it too (compared on every code point); text that holds nothing JSON
// escapes goes between quotes as it is. Digits, decimals and the source (the table's checks allow
// only those) need no escaping. Times are to_char's ISO text (timestamptz.ts).
import type { BillsRange } from "../store/bills-read.ts";
import { forEachRow, RowFields } from "./binary-rows.ts";
import type { CopyPage } from "./copy-pages.ts";
import type { ExportFormat, RenderedLines } from "./export-format.ts";
import { LineBytes } from "./line-bytes.ts";
import { epochMillis, isoText, TimeTextError } from "./timestamptz.ts";

/** The values a line takes, in the order the COPY sends them. */
const COLUMNS = [
  "bill_id",
  "coin",
  "symbol",
  "business_type",
  "amount::text",
  "balance::text",
  "fill_fee::text",
  "created_at",
  "payload",
  "first_seen_at",
  "last_seen_at",
  "source",
  "transfer_reason",
] as const;
const [ID, COIN, SYMBOL, TYPE, AMOUNT, BALANCE, FEE, CREATED, PAYLOAD, FIRST_SEEN, LAST_SEEN, SOURCE, REASON] =
  COLUMNS.map((_, i) => i) as number[] as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
const NAMES = [
  "bill_id",
  "coin",
  "symbol",
  "business_type",
  "amount",
  "balance",
  "fill_fee",
  "created_at",
  "raw",
  "first_seen_at",
  "last_seen_at",
  "source",
  "transfer_reason",
];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;
const COLON = 0x3a;
const DOT = 0x2e;
const ZULU = 0x5a;
const NULL_TEXT = Buffer.from("null");

/** A bill whose values cannot be written as a line: names the bill and the column. */
export class JsonlValueError extends Error {}

/** The constant text between two values, encoded once per export. */
function pieces(account: string) {
  const b = (text: string) => Buffer.from(text, "utf8");
  return {
    start: b(`{"account_name":${JSON.stringify(account)},"bill_id":"`),
    coin: b(`","coin":`),
    symbol: b(`,"symbol":`),
    type: b(`,"business_type":`),
    amount: b(`,"amount":"`),
    balance: b(`","balance":"`),
    fee: b(`","fill_fee":"`),
    created: b(`","created_at":`),
    ms: b(`,"created_at_ms":"`),
    raw: b(`","raw":`),
    firstSeen: b(`,"first_seen_at":`),
    lastSeen: b(`,"last_seen_at":`),
    source: b(`,"source":"`),
    reason: b(`","transfer_reason":`),
    end: b("}\n"),
  };
}

const DAY_MS = 86_400_000;

/**
 * A time column: `"<ISO>"`, or null for an infinite time. Ledger order keeps a column's times within a
 * day for many rows, so the day's text is made once and only the time of day is written per row.
 */
class TimeColumn {
  private hi = 0;
  private lo = 0;
  private read = false;
  /** The epoch milliseconds of the time last written (null: infinite). */
  ms: number | null = null;
  private dayStart = Number.NaN;
  /** `"YYYY-MM-DDT` of the day that starts at dayStart. */
  private dayText = Buffer.alloc(0);

  write(out: LineBytes, bytes: Buffer, at: number): void {
    const hi = bytes.readInt32BE(at);
    const lo = bytes.readUInt32BE(at + 4);
    if (!this.read || hi !== this.hi || lo !== this.lo) {
      this.ms = epochMillis(bytes, at);
      [this.hi, this.lo, this.read] = [hi, lo, true];
    }
    const ms = this.ms;
    if (ms === null) return out.put(NULL_TEXT);
    let inDay = ms - this.dayStart;
    if (!(inDay >= 0 && inDay < DAY_MS)) {
      // (isoText refuses a year to_char would write otherwise; a day is all in range or all out.)
      this.dayText = Buffer.from(`"${isoText(ms).slice(0, 11)}`, "latin1");
      this.dayStart = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
      inDay = ms - this.dayStart;
    }
    out.put(this.dayText);
    out.padded(Math.floor(inDay / 3_600_000), 2);
    out.byte(COLON);
    out.padded(Math.floor(inDay / 60_000) % 60, 2);
    out.byte(COLON);
    out.padded(Math.floor(inDay / 1000) % 60, 2);
    out.byte(DOT);
    out.padded(inDay % 1000, 3);
    out.byte(ZULU);
    out.byte(QUOTE);
  }
}

/** Renders the pages of one export's COPY as its lines. */
function lineWriter(range: BillsRange) {
  const p = pieces(range.account);
  const row = new RowFields(COLUMNS.length);
  const created = new TimeColumn();
  const firstSeen = new TimeColumn();
  const lastSeen = new TimeColumn();
  let out: LineBytes | undefined;

  const present = (i: number) => {
    if (row.isNull(i)) throw new JsonlValueError(`bill ${billOf(row)}: ${NAMES[i]} is NULL`);
  };
  const copy = (i: number) => {
    present(i);
    out!.copy(row.bytes, row.start[i]!, row.start[i]! + row.length[i]!);
  };
  const jsonString = (i: number) => {
    if (row.isNull(i)) return out!.put(NULL_TEXT);
    const bytes = row.bytes;
    const from = row.start[i]!;
    const to = from + row.length[i]!;
    for (let k = from; k < to; k++) {
      const c = bytes[k]!;
      if (c < SPACE || c === QUOTE || c === BACKSLASH)
        return out!.utf8(JSON.stringify(bytes.toString("utf8", from, to)));
    }
    out!.byte(QUOTE);
    out!.copy(bytes, from, to);
    out!.byte(QUOTE);
  };
  const time = (column: TimeColumn, i: number) => {
    present(i);
    try {
      column.write(out!, row.bytes, row.start[i]!);
    } catch (err) {
      if (err instanceof TimeTextError) throw new JsonlValueError(`bill ${billOf(row)}: ${NAMES[i]} is ${err.message}`);
      throw err;
    }
  };

  const line = () => {
    const o = out!;
    o.put(p.start);
    copy(ID);
    o.put(p.coin);
    present(COIN);
    jsonString(COIN);
    o.put(p.symbol);
    jsonString(SYMBOL);
    o.put(p.type);
    present(TYPE);
    jsonString(TYPE);
    o.put(p.amount);
    copy(AMOUNT);
    o.put(p.balance);
    copy(BALANCE);
    o.put(p.fee);
    copy(FEE);
    o.put(p.created);
    time(created, CREATED);
    if (created.ms === null) throw new JsonlValueError(`bill ${billOf(row)}: created_at is infinite`);
    o.put(p.ms);
    o.integer(created.ms);
    o.put(p.raw);
    const raw = o.length;
    copy(PAYLOAD);
    o.spaceLineBreaksSince(raw);
    o.put(p.firstSeen);
    time(firstSeen, FIRST_SEEN);
    o.put(p.lastSeen);
    time(lastSeen, LAST_SEEN);
    o.put(p.source);
    copy(SOURCE);
    o.put(p.reason);
    jsonString(REASON);
    o.put(p.end);
  };

  return (page: CopyPage): Buffer => {
    // Lines run about a third longer than the values they carry.
    out ??= new LineBytes(Math.ceil(page.bytes.length * 1.5));
    const rows = forEachRow(page.bytes, row, line);
    if (rows !== page.rows) throw new JsonlValueError(`a page of ${page.rows} rows held ${rows}`);
    return out.take();
  };
}

function billOf(row: RowFields): string {
  return row.isNull(ID) ? "(no id)" : row.slice(ID).toString("latin1");
}

export const jsonl: ExportFormat = {
  reads: "every column",
  header: "",
  lines: (range): RenderedLines => ({ columns: COLUMNS.join(", "), render: lineWriter(range) }),
};
