// A binary timestamptz as the exports write a time: epoch milliseconds exact on both sides of 2^53
// microseconds, to_char's ISO text for years 1 to 9999, infinite times as null, and what cannot be
// written as PostgreSQL would (microseconds, other years) refused by name.
import { describe, expect, it } from "vitest";
import { epochMillis, isoText, TimeTextError } from "../../src/export/timestamptz.ts";

const MS_2000 = 946_684_800_000n;
const int64 = (micros: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(micros);
  return b;
};
const fromMs = (ms: bigint) => int64((ms - MS_2000) * 1000n);

describe("epochMillis", () => {
  it.each([
    ["2026-01-31T14:25:13.123Z"],
    ["1970-01-01T00:00:00.000Z"],
    ["1969-12-31T23:59:59.999Z"],
    ["1999-12-31T23:59:59.999Z"],
    ["2300-06-15T12:34:56.789Z"],
    ["1500-03-01T00:00:00.001Z"],
    ["0001-01-01T00:00:00.000Z"],
    ["9999-12-31T23:59:59.999Z"],
  ])("%s: its milliseconds, and to_char's text back", (iso) => {
    const ms = Date.parse(iso);
    expect(epochMillis(fromMs(BigInt(ms)), 0)).toBe(ms);
    expect(isoText(ms)).toBe(iso);
  });

  it("gives null for PostgreSQL's infinite times", () => {
    expect(epochMillis(int64(0x7fffffffffffffffn), 0)).toBeNull();
    expect(epochMillis(int64(-0x8000000000000000n), 0)).toBeNull();
  });

  it("refuses a time with microseconds, on either side of 2^53", () => {
    expect(() => epochMillis(int64(1n), 0)).toThrow(TimeTextError);
    expect(() => epochMillis(int64(1n), 0)).toThrow(/a time with microseconds \(1 µs after 2000-01-01\)/);
    expect(() => epochMillis(int64(2n ** 60n + 1n), 0)).toThrow(/a time with microseconds/);
  });

  it("refuses a time too far off to count in milliseconds", () => {
    expect(() => epochMillis(int64(9_223_372_036_854_000_000n), 0)).toThrow(
      /too far from today to count in milliseconds/,
    );
  });
});

describe("isoText", () => {
  it("refuses years to_char writes otherwise than ISO 8601's four digits", () => {
    expect(() => isoText(Date.parse("9999-12-31T23:59:59.999Z") + 1)).toThrow(/outside the years 1 to 9999/);
    expect(() => isoText(Date.parse("0001-01-01T00:00:00.000Z") - 1)).toThrow(TimeTextError);
  });
});
