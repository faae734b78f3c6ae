// The text rules every format rests on: signs and absolute values taken off NUMERIC text, CSV
// quoting, and NULL kept apart from the empty string as PostgreSQL's COPY does.
import { describe, expect, it } from "vitest";
import { absoluteText, directionOf, isZeroText } from "../../src/export/amount-text.ts";
import { csvField, csvLine } from "../../src/export/csv.ts";
import { coinTrackerDate, cryptactDate, koinlyDate } from "../../src/export/utc-time.ts";
import { copyCsvField } from "./line-oracle.ts";

describe("amounts as text", () => {
  it.each([
    ["12.50", "in", "12.50"],
    ["-0.000000000000000001", "out", "0.000000000000000001"],
    ["-98765432109876543210.123456789012345678", "out", "98765432109876543210.123456789012345678"],
    ["0", null, "0"],
    ["0.000", null, "0.000"],
  ])("%s: side %s, quantity %s", (amount, side, quantity) => {
    expect(directionOf(amount)).toBe(side);
    expect(absoluteText(amount)).toBe(quantity);
    expect(isZeroText(amount)).toBe(side === null);
  });
});

describe("CSV", () => {
  it("quotes only fields that need it, doubling quotes", () => {
    expect(csvField("cmt_btcusdt")).toBe("cmt_btcusdt");
    expect(csvField('cmt_odd,"pair"')).toBe('"cmt_odd,""pair"""');
    expect(csvField("two\nlines")).toBe('"two\nlines"');
    expect(csvLine(["a", "", "b,c"])).toBe('a,,"b,c"\n');
  });

  it('writes NULL as nothing and the empty string as "", as COPY ... CSV does', () => {
    expect(copyCsvField(null)).toBe("");
    expect(copyCsvField("")).toBe('""');
    expect(copyCsvField("v2")).toBe("v2");
  });
});

describe("the tools' times", () => {
  it("are cut from the UTC ISO text, to the second", () => {
    const iso = "2026-01-31T14:25:13.123Z";
    expect(koinlyDate(iso)).toBe("2026-01-31 14:25:13 UTC");
    expect(coinTrackerDate(iso)).toBe("01/31/2026 14:25:13");
    expect(cryptactDate(iso)).toBe("2026/01/31 14:25:13");
  });
});
