// What the profile learns from pages: returned times outside the range asked (kept, measured,
// and bound measurements no longer relied on), a time filter plainly ignored (fails by name), and
// what it starts from (stored facts, the user's settings).
import { describe, expect, it } from "vitest";
import type { Bill } from "../../../src/exchange/bill-item.ts";
import type { BillsPage } from "../../../src/exchange/bills-endpoint.ts";
import { NO_FACTS } from "../../../src/store/exchange-profiles.ts";
import { TimeFilterIgnoredError } from "../../../src/streams/bills-core/errors.ts";
import { ExchangeProfile, FILTER_IGNORED_MS } from "../../../src/streams/bills-core/exchange-profile.ts";

const bill = (id: number, cTimeMs: number) => ({ billId: String(id), cTimeMs }) as Bill;
const page = (...bills: Bill[]): BillsPage => ({
  itemCount: bills.length,
  hasNextPage: false,
  bills,
  rejected: [],
  unknownBusinessTypes: [],
});
const q = (startTime: number, endTime: number) => ({ startTime, endTime, limit: 100 });

describe("ExchangeProfile", () => {
  it("measures how far returned times lie outside the range asked, and stops using measured bounds", () => {
    const offsets: number[] = [];
    const p = new ExchangeProfile(
      100,
      { ...NO_FACTS, startInclusive: true, endInclusive: false },
      {},
      { onFilterOffset: (ms) => offsets.push(ms) },
    );
    expect(p.bounds).toEqual({ start: 0, end: 1 });
    p.observe(page(bill(1, 1000), bill(2, 1999)), q(1000, 2000));
    expect(p.filterOffsetMs).toBe(0);
    p.observe(page(bill(3, 7000), bill(4, 9997)), q(10_000, 20_000));
    expect(p.filterOffsetMs).toBe(3000);
    expect(offsets).toEqual([3000]);
    expect(p.bounds).toBeUndefined();
    expect(p.facts()).toMatchObject({ filterOffsetMs: 3000, startInclusive: null, endInclusive: null });
  });

  it("fails by name when a bill comes back further outside than any plausible filter lag", () => {
    const p = new ExchangeProfile(100, NO_FACTS);
    expect(() => p.observe(page(bill(9, 1_000_000 - FILTER_IGNORED_MS - 1)), q(1_000_000, 2_000_000))).toThrow(
      TimeFilterIgnoredError,
    );
    expect(() => p.observe(page(bill(9, 1_000_000 - FILTER_IGNORED_MS)), q(1_000_000, 2_000_000))).not.toThrow();
  });

  it("starts from the stored facts, tightened by what the user set", () => {
    const p = new ExchangeProfile(
      100,
      { ...NO_FACTS, maxSpanMs: 5 * 86_400_000, historyMs: 90 * 86_400_000 },
      { maxSpanMs: 86_400_000, historyDays: 120 },
    );
    expect(p.limits.maxSpanMs).toBe(86_400_000);
    expect(p.limits.historyMs).toBe(90 * 86_400_000);
    const fresh = new ExchangeProfile(100, NO_FACTS, { historyDays: 30 });
    expect(fresh.facts()).toMatchObject({ historyMs: 30 * 86_400_000, maxSpanMs: null });
  });
});
