// The rows of a binary COPY page (copy-pages.ts takes off the file's header and end marker): each row
// is its field count (int16) and then, per field, its length in bytes (int32, -1 for NULL) and those
// bytes. A text value's bytes are its UTF-8 text, a timestamptz's are microseconds since
// 2000-01-01 UTC (int64). Read in place: a row's fields are offsets into the page, never copies.
// Anything else than rows of the fields asked for is an error that names the row.

export class BinaryRowError extends Error {}

/** The fields of the row being read: `start[i]` and `length[i]` (-1: NULL) into `bytes`. */
export class RowFields {
  readonly start: Int32Array;
  readonly length: Int32Array;
  bytes: Buffer = Buffer.alloc(0);

  constructor(readonly count: number) {
    this.start = new Int32Array(count);
    this.length = new Int32Array(count);
  }

  isNull(i: number): boolean {
    return this.length[i]! < 0;
  }

  /** The field's bytes (a view into the page). */
  slice(i: number): Buffer {
    return this.bytes.subarray(this.start[i]!, this.start[i]! + this.length[i]!);
  }

  /** Where an 8-byte field's value starts (a timestamptz: its microseconds since 2000-01-01 UTC). */
  int64At(i: number): number {
    if (this.length[i] !== 8) throw new BinaryRowError(`field ${i + 1} is not a timestamptz (${this.length[i]} bytes)`);
    return this.start[i]!;
  }
}

/** Calls `row` for each row of `page`, with its `fields.count` fields located in `fields`. */
export function forEachRow(page: Buffer, fields: RowFields, row: (fields: RowFields) => void): number {
  fields.bytes = page;
  let at = 0;
  let rows = 0;
  while (at < page.length) {
    rows++;
    if (at + 2 > page.length) throw new BinaryRowError(`row ${rows} of the page is cut short`);
    const count = page.readInt16BE(at);
    if (count !== fields.count)
      throw new BinaryRowError(`row ${rows} of the page has ${count} fields, where ${fields.count} were asked for`);
    at += 2;
    for (let i = 0; i < count; i++) {
      if (at + 4 > page.length) throw new BinaryRowError(`row ${rows} of the page is cut short in field ${i + 1}`);
      const length = page.readInt32BE(at);
      at += 4;
      if (length < -1 || at + Math.max(length, 0) > page.length)
        throw new BinaryRowError(`row ${rows} of the page: field ${i + 1} claims ${length} bytes`);
      fields.start[i] = at;
      fields.length[i] = length;
      if (length > 0) at += length;
    }
    row(fields);
  }
  return rows;
}
