// What the stream learns from the exchange's -1170 refusals: each figure only where it explains
// the refusal, the unexplained ones told apart by a narrow query, and never an endless loop.
import { describe, expect, it } from "vitest";
import type { BillsQuery } from "../../../src/exchange/bills-endpoint.ts";
import { ExchangeTimeRangeRefusal } from "../../../src/exchange/errors.ts";
import { RangeRefusedError } from "../../../src/streams/bills-core/errors.ts";
import { HORIZON_MARGIN_MS, RangeLimits } from "../../../src/streams/bills-core/range-limits.ts";

const DAY = 86_400_000;
const refusal = (historyDays?: number, maxSpanDays?: number, msg = "refused") =>
  new ExchangeTimeRangeRefusal("bills", 400, "-1170", msg, historyDays, maxSpanDays);
const q = (startTime: number, endTime: number): BillsQuery => ({ startTime, endTime, limit: 100 });

/** An exchange keeping `historyMs` and refusing spans over `maxSpanMs`, for the narrow checks. */
function exchange(historyMs: number | null, maxSpanMs: number | null) {
  const asked: BillsQuery[] = [];
  const send = async (query: BillsQuery) => {
    asked.push(query);
    const tooOld = historyMs !== null && query.startTime < Date.now() - historyMs;
    const tooWide = maxSpanMs !== null && query.endTime - query.startTime > maxSpanMs;
    if (tooOld || tooWide) throw refusal();
    return {};
  };
  return { asked, send };
}

describe("RangeLimits", () => {
  it("believes the stated span when the range asked was wider, and narrows windows to fit padded queries", async () => {
    const limits = new RangeLimits(null, null);
    const now = Date.now();
    const ex = exchange(null, null);
    expect(await limits.learn(q(now - 10 * DAY, now), refusal(90, 2), ex.send)).toBe("narrower");
    expect(limits.maxSpanMs).toBe(2 * DAY);
    expect(limits.maxWindowMs()).toBe(2 * DAY - 2);
    expect(limits.tooWide(q(0, 2 * DAY))).toBe(false);
    expect(limits.tooWide(q(0, 2 * DAY + 1))).toBe(true);
    expect(ex.asked).toEqual([]); // explained by the message: no check needed
  });

  it("believes the stated history when the start was older, and clips queries to the horizon from then on", async () => {
    const limits = new RangeLimits(null, null);
    const now = Date.now();
    expect(await limits.learn(q(now - 95 * DAY, now - 94 * DAY), refusal(90, 100), exchange(null, null).send)).toBe(
      "later",
    );
    expect(limits.historyMs).toBe(90 * DAY);
    const from = limits.retrievableFromMs(Date.now())!;
    expect(Math.abs(from - (Date.now() - 90 * DAY + HORIZON_MARGIN_MS))).toBeLessThan(50);
    expect(limits.clip(q(now - 95 * DAY, now - 94 * DAY), Date.now())).toBe("beyond");
    const clipped = limits.clip(q(now - 95 * DAY, now - 80 * DAY), Date.now());
    expect(clipped).not.toBe("beyond");
    expect((clipped as BillsQuery).startTime).toBeGreaterThanOrEqual(now - 90 * DAY);
  });

  it("does not believe a stated history that the start does not break (the message names both limits whatever was broken)", async () => {
    const limits = new RangeLimits(null, null);
    const now = Date.now();
    // Only a 2-day span limit, but the message says "within the last 100 days": the start here is
    // older than 100 days, the span 3 days. Narrowing is the answer, not a horizon.
    expect(await limits.learn(q(now - 200 * DAY, now - 197 * DAY), refusal(100, 2), exchange(null, 2 * DAY).send)).toBe(
      "narrower",
    );
    expect(limits.historyMs).toBeNull();
  });

  it("tells an unexplained refusal apart with one narrow query: accepted means the range was too wide (halved)", async () => {
    const limits = new RangeLimits(null, null);
    const now = Date.now();
    const ex = exchange(null, DAY);
    expect(await limits.learn(q(now - 4 * DAY, now), refusal(), ex.send)).toBe("narrower");
    expect(limits.maxSpanMs).toBe(2 * DAY);
    expect(ex.asked).toHaveLength(1);
  });

  it("and refused means the start was too old: the horizon is found by bisection, to the second", async () => {
    const limits = new RangeLimits(null, null);
    const now = Date.now();
    const ex = exchange(30 * DAY, null);
    expect(await limits.learn(q(now - 40 * DAY, now - 39 * DAY), refusal(), ex.send)).toBe("later");
    expect(Math.abs(limits.historyMs! - 30 * DAY)).toBeLessThan(2_000);
    expect(ex.asked.length).toBeLessThan(40);
  });

  it("fails by name when even the narrowest range is refused, or after too many refusals", async () => {
    const limits = new RangeLimits(null, null);
    await expect(
      limits.learn(q(1000, 1002), refusal(undefined, 0.00000001), exchange(null, null).send),
    ).rejects.toThrow(RangeRefusedError);
    const stubborn = new RangeLimits(null, null);
    const never = async () => {
      throw refusal();
    };
    await expect(stubborn.learn(q(Date.now() - DAY, Date.now()), refusal(), never)).rejects.toThrow(
      /a query starting a minute ago is refused too/,
    );
    const many = new RangeLimits(null, null);
    const now = Date.now();
    let error: unknown;
    for (let i = 0; i < 100 && !error; i++) {
      // An exchange whose stated horizon creeps forward on every refusal.
      await many
        .learn(q(now - 200 * DAY, now - 199 * DAY), refusal(150 - i, 100), exchange(null, null).send)
        .catch((e: unknown) => (error = e));
    }
    expect(error).toBeInstanceOf(RangeRefusedError);
    expect(String(error)).toMatch(/64 time ranges refused in one run.*EXCHANGE_MAX_SPAN_MS/);
  });
});
