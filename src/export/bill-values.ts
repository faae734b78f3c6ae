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

/**
 * A time column: `open` + ISO text + `close`, or `nullText` for an infinite time. Ledger order keeps
 * a column's times within a day for many rows, so the day's text is made once and only the time of
 * day is written per row.
 */
export class TimeColumn {
  private hi = 0;
  private lo = 0;
  private read = false;
  /** The epoch milliseconds of the time last written (null: infinite). */
  ms: number | null = null;
  private dayStart = Number.NaN;
  /** `open` and `YYYY-MM-DDT` of the day that starts at dayStart. */
  private dayText = Buffer.alloc(0);
  private readonly tail: Buffer;

  constructor(
    private readonly open: string,
    close: string,
    private readonly nullText: Buffer,
  ) {
    this.tail = Buffer.from(`Z${close}`, "latin1");
  }

  write(out: LineBytes, bytes: Buffer, at: number): void {
    const hi = bytes.readInt32BE(at);
    const lo = bytes.readUInt32BE(at + 4);
    if (!this.read || hi !== this.hi || lo !== this.lo) {
      this.ms = epochMillis(bytes, at);
      [this.hi, this.lo, this.read] = [hi, lo, true];
    }
    const ms = this.ms;
    if (ms === null) return out.put(this.nullText);
    let inDay = ms - this.dayStart;
    if (!(inDay >= 0 && inDay < DAY_MS)) {
      // (isoText refuses a year to_char would write otherwise; a day is all in range or all out.)
      this.dayText = Buffer.from(`${this.open}${isoText(ms).slice(0, 11)}`, "latin1");
      this.dayStart = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
      inDay = ms - this.dayStart;
    }
    out.put(this.dayText);
    out.padded(Math.floor(inDay / 3_600_000), 2);
    out.byte(0x3a);
    out.padded(Math.floor(inDay / 60_000) % 60, 2);
    out.byte(0x3a);
    out.padded(Math.floor(inDay / 1000) % 60, 2);
    out.byte(0x2e);
    out.padded(inDay % 1000, 3);
    out.put(this.tail);
  }
}

/** The bill being written: its values, and the page's lines so far. */
export class BillValues {
  readonly row = new RowFields(SELECTED.length);
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

  /** A time value through its column (a NULL refused). */
  time(column: TimeColumn, i: number): void {
    this.present(i);
    try {
      column.write(this.out, this.row.bytes, this.row.start[i]!);
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
  let sized = false;
  return {
    columns: SELECTED.map(([, sql]) => sql).join(", "),
    render(page: CopyPage): Buffer {
      // Lines run about half again as long as the values they carry.
      if (!sized) [values.out, sized] = [new LineBytes(Math.ceil(page.bytes.length * 1.5)), true];
      const rows = forEachRow(page.bytes, values.row, line);
      if (rows !== page.rows) throw new BillValueError(`a page of ${page.rows} rows held ${rows}`);
      return values.out.take();
    },
  };
}
