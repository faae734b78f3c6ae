// Our own formats' lines (jsonl, ledger-csv) are put together here, on the client's core, from each
// bill's values as PostgreSQL sends them in a binary COPY, while the server reads on: the server's
// core is what bounds an export, and building the lines' text there (quoting, times, concatenation)
// was about half of its work per bill (docs/design/volume-bench.md). A value is copied as the bytes
// PostgreSQL sent (NUMERIC text digit for digit, the payload as stored), never decoded and
// re-encoded; times are to_char's ISO text (timestamptz.ts). A value the books' checks never let in
// (a NULL where the column has none, a time no to_char text matches) is refused naming the bill.
import { forEachRow, RowFields } from "./binary-rows.ts";
import type { CopyPage } from "./copy-pages.ts";
import type { RenderedLines } from "./export-format.ts";
import { LineBytes } from "./line-bytes.ts";
import { epochMillis, isoText, TimeTextError } from "./timestamptz.ts";

/** Every column of `bills` but the account's name (the export's own) and created_at_ms (from created_at). */
const SELECTED = [
  ["bill_id", "bill_id"],
  ["coin", "coin"],
  ["symbol", "symbol"],
  ["business_type", "business_type"],
  ["amount", "amount::text"],
  ["balance", "balance::text"],
  ["fill_fee", "fill_fee::text"],
  ["created_at", "created_at"],
  ["raw", "payload"],
  ["first_seen_at", "first_seen_at"],
  ["last_seen_at", "last_seen_at"],
  ["source", "source"],
  ["transfer_reason", "transfer_reason"],
] as const;

/** The position of each value in a row, by the column name the formats write it under. */
export const V = Object.fromEntries(SELECTED.map(([name], i) => [name, i])) as {
  [K in (typeof SELECTED)[number][0]]: number;
};

/** A bill whose values cannot be written as a line. */
export class BillValueError extends Error {}

const DAY_MS = 86_400_000;

/** "00" to "99", two bytes each. */
const TWO_DIGITS = Buffer.from(Array.from({ length: 100 }, (_, n) => String(n).padStart(2, "0")).join(""), "latin1");

/**
 * A time column: `open` + ISO text + `close`, or `nullText` for an infinite time. The text of the
 * time last written is kept (the bills of one write share their seen times), ledger order keeps a
 * column within a day for many rows (the day's text is made once, only the time of day per row), and
 * a column may take another's text for the same time (last_seen_at is first_seen_at until revised).
 */
export class TimeColumn {
  private hi = 0;
  private lo = 0;
  private read = false;
  /** The epoch milliseconds of the time last written (null: infinite). */
  ms: number | null = null;
  /** What was written for it. */
  private text: Buffer;
  private dayStart = Number.NaN;
  /** The bytes before the time of day: `open` and `YYYY-MM-DDT` of the day that starts at dayStart. */
  private readonly scratch: Buffer;
  private readonly timeAt: number;

  constructor(
    open: string,
    close: string,
    private readonly nullText: Buffer,
  ) {
    const head = Buffer.from(`${open}YYYY-MM-DDT`, "latin1");
    const tail = Buffer.from(`Z${close}`, "latin1");
    this.timeAt = head.length;
    this.scratch = Buffer.concat([head, Buffer.from("HH:MM:SS.mmm", "latin1"), tail]);
    this.text = nullText;
  }

  /**
   * The time at `at` of `bytes`. `same`: a column already written for this row, whose text is taken
   * when its time is this one.
   */
  write(out: LineBytes, bytes: Buffer, at: number, same?: TimeColumn): void {
    const hi = bytes.readInt32BE(at);
    const lo = bytes.readUInt32BE(at + 4);
    if (!this.read || hi !== this.hi || lo !== this.lo) {
      if (same !== undefined && same.read && hi === same.hi && lo === same.lo)
        [this.ms, this.text] = [same.ms, same.text];
      else this.make(bytes, at);
      [this.hi, this.lo, this.read] = [hi, lo, true];
    }
    out.put(this.text);
  }

  private make(bytes: Buffer, at: number): void {
    const ms = (this.ms = epochMillis(bytes, at));
    if (ms === null) {
      this.text = this.nullText;
      return;
    }
    const t = this.scratch;
    let inDay = ms - this.dayStart;
    if (!(inDay >= 0 && inDay < DAY_MS)) {
      // (isoText refuses a year to_char would write otherwise; a day is all in range or all out.)
      t.write(isoText(ms).slice(0, 11), this.timeAt - 11, "latin1");
      this.dayStart = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
      inDay = ms - this.dayStart;
    }
    const [hours, minutes, seconds, millis] = [
      Math.floor(inDay / 3_600_000),
      Math.floor(inDay / 60_000) % 60,
      Math.floor(inDay / 1000) % 60,
      inDay % 1000,
    ];
    const k = this.timeAt;
    t[k] = TWO_DIGITS[2 * hours]!;
    t[k + 1] = TWO_DIGITS[2 * hours + 1]!;
    t[k + 3] = TWO_DIGITS[2 * minutes]!;
    t[k + 4] = TWO_DIGITS[2 * minutes + 1]!;
    t[k + 6] = TWO_DIGITS[2 * seconds]!;
    t[k + 7] = TWO_DIGITS[2 * seconds + 1]!;
    t[k + 9] = 0x30 + Math.floor(millis / 100);
    t[k + 10] = TWO_DIGITS[2 * (millis % 100)]!;
    t[k + 11] = TWO_DIGITS[2 * (millis % 100) + 1]!;
    // A copy: the scratch is rewritten for the next time, the text may be kept (by this column or another).
    this.text = Buffer.from(t);
  }
}

/** The bill being written: its values, and the page's lines so far. */
export class BillValues {
  readonly row = new RowFields(SELECTED.length);
  /** Grows to a page's lines on the first page; each page's buffer is as large as the last. */
  out = new LineBytes(1024);

  isNull(i: number): boolean {
    return this.row.isNull(i);
  }

  /** Refuses a NULL where the books hold none. */
  present(i: number): void {
    if (this.row.isNull(i)) this.refuse(`${SELECTED[i]![0]} is NULL`);
  }

  /** Refuses the bill: `what` says which value and why. */
  refuse(what: string): never {
    throw new BillValueError(`bill ${this.billId()}: ${what}`);
  }

  /** The value's bytes as sent (a NULL refused). */
  copy(i: number): void {
    this.present(i);
    this.out.copy(this.row.bytes, this.row.start[i]!, this.row.start[i]! + this.row.length[i]!);
  }

  start(i: number): number {
    return this.row.start[i]!;
  }

  end(i: number): number {
    return this.row.start[i]! + this.row.length[i]!;
  }

  /** A time value through its column (a NULL refused); `same`: see TimeColumn.write. */
  time(column: TimeColumn, i: number, same?: TimeColumn): void {
    this.present(i);
    try {
      column.write(this.out, this.row.bytes, this.row.int64At(i), same);
    } catch (err) {
      if (err instanceof TimeTextError) this.refuse(`${SELECTED[i]![0]} is ${err.message}`);
      throw err;
    }
  }

  billId(): string {
    return this.row.isNull(V.bill_id) ? "(no id)" : this.row.slice(V.bill_id).toString("latin1");
  }
}

/**
 * A format's RenderedLines: the values above, and `line` writing a bill's line from them. `line` is
 * made once per export, so a format may keep per-export state (its constant pieces, its time columns).
 */
export function renderedLines(lineWriter: (v: BillValues) => () => void): RenderedLines {
  const values = new BillValues();
  const line = lineWriter(values);
  return {
    columns: SELECTED.map(([, sql]) => sql).join(", "),
    render(page: CopyPage): Buffer {
      const rows = forEachRow(page.bytes, values.row, line);
      if (rows !== page.rows) throw new BillValueError(`a page of ${page.rows} rows held ${rows}`);
      return values.out.take();
    },
  };
}
