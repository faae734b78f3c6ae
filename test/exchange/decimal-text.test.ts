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
  ])("%s -> %s", (input, out) => {
    expect(toDecimalText(input)).toEqual({ ok: true, text: out });
  });

  it.each(["", " 1", "1,5", "0x10", "Infinity", "NaN", "1e999999", "--1", "1.2.3", `0.${"1".repeat(16384)}`])("rejects %j", (input) => {
    expect(toDecimalText(input).ok).toBe(false);
  });
});
