// The coin page's range: UTC days, both included, defaults placed by the coin's latest bill, and a
// 400 whose message names the parameter for anything else.
import { describe, expect, it } from "vitest";
import { dayRange, maxPoints } from "../../src/console/day-range.ts";
import { ConsoleRequestError } from "../../src/console/headers.ts";

const LATEST = Date.UTC(2026, 8, 19, 20, 44, 32, 937);

describe("the day range", () => {
  it("reads both days as included, as [first midnight, midnight after the last) in ms", () => {
    expect(dayRange({ from: "2026-02-28", to: "2026-03-01" }, LATEST)).toEqual({
      from: "2026-02-28",
      to: "2026-03-01",
      fromMs: Date.UTC(2026, 1, 28),
      toMs: Date.UTC(2026, 2, 2),
    });
  });

  it("defaults to the 90 days ending on the day of the latest bill", () => {
    expect(dayRange({}, LATEST)).toMatchObject({ from: "2026-06-22", to: "2026-09-19" });
    expect(dayRange({ to: "2026-01-31" }, LATEST)).toMatchObject({ from: "2025-11-03", to: "2026-01-31" });
  });

  it.each([
    [{ from: "2026-02-30" }, 'from must be one UTC day written YYYY-MM-DD, such as 2026-01-31 (got "2026-02-30")'],
    [{ to: "2026-9-1" }, 'to must be one UTC day written YYYY-MM-DD, such as 2026-01-31 (got "2026-9-1")'],
    [{ from: "" }, 'from must be one UTC day written YYYY-MM-DD, such as 2026-01-31 (got "")'],
    [
      { from: ["2026-01-01", "2026-01-02"] },
      'from must be one UTC day written YYYY-MM-DD, such as 2026-01-31 (got ["2026-01-01","2026-01-02"])',
    ],
    [
      { from: "2026-03-02", to: "2026-03-01" },
      "from (2026-03-02) must not be after to (2026-03-01): both days are included",
    ],
    [{ from: "2000-01-01", to: "2026-01-01" }, "the range is 9498 days; at most 3660 can be shown at once"],
  ])("refuses %j with a 400 naming it", (query, message) => {
    let thrown: unknown;
    try {
      dayRange(query, LATEST);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConsoleRequestError);
    expect(thrown).toMatchObject({ status: 400, message });
  });

  it("takes points from 2 to 10000", () => {
    expect(maxPoints(undefined, 1000)).toBe(1000);
    expect(maxPoints("250", 1000)).toBe(250);
    expect(() => maxPoints("1", 1000)).toThrow('points must be a whole number from 2 to 10000 (got "1")');
    expect(() => maxPoints("1e3", 1000)).toThrow(/points must be a whole number/);
  });
});
