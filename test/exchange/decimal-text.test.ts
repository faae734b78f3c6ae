import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toDecimalText } from "../../src/exchange/decimal-text.ts";

describe("decimal text", () => {
  it.each([
    ["0", "0"],
    ["-0", "0"],
    ["-0.000", "0.000"],
    ["007.50", "7.50"],
    ["+1.5", "1.5"],
    ["1.500", "1.500"],
    [".5", "0.5"],
    ["5.", "5"],
    ["1e-7", "0.0000001"],
    ["-1.25E+2", "-125"],
    ["1.50e1", "15.0"],
    ["-0e-3", "0.000"],
    ["1".repeat(1000), "1".repeat(1000)],
    ["-12.50", "-12.50"],
    ["0.0", "0.0"],
    ["-0.0001", "-0.0001"],
    ["-0.00", "0.00"],
    ["10", "10"],
  ])("%s -> %s", (input, out) => {
    expect(toDecimalText(input)).toEqual({ ok: true, text: out });
  });

  it.each(["", " 1", "1,5", "0x10", "Infinity", "NaN", "1e999999", "--1", "1.2.3", `0.${"1".repeat(16384)}`])(
    "rejects %j",
    (input) => {
      expect(toDecimalText(input).ok).toBe(false);
    },
  );

  it("gives text already in NUMERIC's form back unchanged, and drops the sign of zero (the quick path agrees with the full parse)", () => {
    const digits = (min: number, max: number) =>
      fc.array(fc.constantFrom(..."0123456789"), { minLength: min, maxLength: max }).map((d) => d.join(""));
    const intPart = fc.oneof(
      fc.constant("0"),
      fc.tuple(fc.constantFrom(..."123456789"), digits(0, 40)).map(([a, b]) => a + b),
    );
    const canonical = fc
      .tuple(fc.boolean(), intPart, fc.option(digits(1, 30), { nil: undefined }))
      .map(([neg, i, f]) => `${neg ? "-" : ""}${i}${f === undefined ? "" : `.${f}`}`);
    fc.assert(
      fc.property(canonical, (text) => {
        const zero = !/[1-9]/.test(text);
        expect(toDecimalText(text)).toEqual({ ok: true, text: zero && text.startsWith("-") ? text.slice(1) : text });
        // The same value with a leading "+" or zeros takes the full parse, to the same text.
        const unsigned = text.replace(/^-/, "");
        expect(toDecimalText(`+00${unsigned}`)).toEqual({ ok: true, text: unsigned });
      }),
      { numRuns: 2000 },
    );
  });
});
