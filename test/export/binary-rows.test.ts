// A binary COPY page read in place: fields located by offset, NULL apart from empty, and a page that
// is not rows of the fields asked for refused naming the row and the field.
import { describe, expect, it } from "vitest";
import { BinaryRowError, forEachRow, RowFields } from "../../src/export/binary-rows.ts";

/** A row as PostgreSQL writes it: the field count, then each field's length (-1: NULL) and bytes. */
function row(...fields: (string | null)[]): Buffer {
  const parts = [Buffer.from([fields.length >> 8, fields.length & 0xff])];
  for (const f of fields) {
    const len = Buffer.alloc(4);
    len.writeInt32BE(f === null ? -1 : Buffer.byteLength(f));
    parts.push(len, Buffer.from(f ?? ""));
  }
  return Buffer.concat(parts);
}

function read(page: Buffer, count: number): (string | null)[][] {
  const out: (string | null)[][] = [];
  forEachRow(page, new RowFields(count), (f) =>
    out.push(Array.from({ length: count }, (_, i) => (f.isNull(i) ? null : f.slice(i).toString()))),
  );
  return out;
}

describe("forEachRow", () => {
  it("reads every row's fields, NULL apart from the empty text", () => {
    const page = Buffer.concat([row("a", null, ""), row("😀", "x,y", "\n")]);
    expect(read(page, 3)).toEqual([
      ["a", null, ""],
      ["😀", "x,y", "\n"],
    ]);
  });

  it.each([
    ["a row of other fields", () => row("a", "b"), /row 1 of the page has 2 fields, where 3 were asked for/],
    [
      "a row cut in its count",
      () => Buffer.concat([row("a", "b", "c"), Buffer.from([0])]),
      /row 2 of the page is cut short/,
    ],
    ["a field cut short", () => row("a", "b", "c").subarray(0, -1), /row 1 of the page: field 3 claims 1 bytes/],
    [
      "a length below -1",
      () => Buffer.from([0, 3, 0xff, 0xff, 0xff, 0xfe]),
      /row 1 of the page: field 1 claims -2 bytes/,
    ],
    ["a row without its lengths", () => Buffer.from([0, 3, 0, 0]), /row 1 of the page is cut short in field 1/],
  ])("refuses %s", (_, page, message) => {
    expect(() => read(page(), 3)).toThrow(BinaryRowError);
    expect(() => read(page(), 3)).toThrow(message);
  });

  it("reads a timestamptz as its microseconds, and refuses a field of another size", () => {
    const micros = Buffer.alloc(8);
    micros.writeBigInt64BE(-1n);
    const page = Buffer.concat([Buffer.from([0, 2, 0, 0, 0, 8]), micros, Buffer.from([0, 0, 0, 1, 0x41])]);
    const seen: bigint[] = [];
    forEachRow(page, new RowFields(2), (f) => {
      seen.push(f.bytes.readBigInt64BE(f.int64At(0)));
      expect(() => f.int64At(1)).toThrow(/field 2 is not a timestamptz \(1 bytes\)/);
    });
    expect(seen).toEqual([-1n]);
  });
});
