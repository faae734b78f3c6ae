import fc from "fast-check";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { BUSINESS_TYPES } from "../../../src/exchange/business-types.ts";
import type { Bill } from "../../../src/exchange/bill-item.ts";
import { syncBills } from "../../../src/streams/bills-v2/bills-stream.ts";
import { UnsplittableMillisecondError } from "../../../src/streams/bills-v2/errors.ts";
import { bill, modelExchange, type ModelBehaviour } from "./model-exchange.ts";

const logger = pino({ level: "silent" });
const behaviours: ModelBehaviour[] = [];
for (const ordering of ["asc", "desc", "newest-asc", "newest-shuffled", "by-id"] as const)
  for (const startInclusive of [true, false])
    for (const endInclusive of [true, false])
      behaviours.push({ ordering, startInclusive, endInclusive, sendsHasNextPage: ordering !== "asc" });

async function run(
  all: Bill[],
  behaviour: ModelBehaviour,
  range: { fromMs: number; toMs: number; limit: number },
  known: Bill[] = [],
) {
  const ex = modelExchange(all, behaviour);
  const stored = new Map<string, Bill>();
  const cursors: number[] = [];
  const summary = await syncBills(range, {
    fetchPage: ex.fetchPage,
    commitWindows: async (w) => {
      for (const b of w.bills) stored.set(b.billId, b);
      cursors.push(w.cursorMs);
      return { inserted: w.bills.length, revised: 0, upserted: w.bills.length, quarantined: 0, insertedLatenessMs: [] };
    },
    knownDimensions: async () => {
      const src = [...stored.values(), ...known];
      const symbolsByCoin = new Map<string, string[]>();
      for (const b of src) {
        const symbols = [...(symbolsByCoin.get(b.coin) ?? []), ...(b.symbol === null ? [] : [b.symbol])];
        symbolsByCoin.set(b.coin, [...new Set(symbols)]);
      }
      return {
        coins: [...symbolsByCoin.keys()],
        symbolsByCoin,
        businessTypes: [...new Set(src.map((b) => b.businessType))],
      };
    },
    logger,
  });
  return { stored, cursors, summary, calls: ex.calls };
}

const ids = (bills: Iterable<Bill>) => [...bills].map((b) => b.billId).sort();

describe("bills paging", () => {
  it.each(behaviours)("fetches exactly the bills in range under %j (property)", async (behaviour) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 5000 }),
            fc.constantFrom("USDT", "USDC"),
            fc.constantFrom(...BUSINESS_TYPES.slice(0, 4)),
          ),
          { maxLength: 300 },
        ),
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 2000, max: 5000 }),
        fc.integer({ min: 2, max: 12 }),
        async (spec, fromMs, toMs, limit) => {
          const all = spec.map(([t, coin, businessType], i) =>
            bill(i, t, { coin, businessType, symbol: `cmt_${i % 3}` }),
          );
          const expected = all.filter((b) => b.cTimeMs >= fromMs && b.cTimeMs <= toMs);
          let result: Awaited<ReturnType<typeof run>>;
          try {
            result = await run(all, behaviour, { fromMs, toMs, limit });
          } catch (err) {
            // The one refusal the stream may make: a page's worth of bills (or more) in one
            // millisecond sharing type, coin and symbol, which no filter can split and a full page
            // cannot prove complete. It must name such a millisecond, never fail otherwise.
            if (!(err instanceof UnsplittableMillisecondError)) throw err;
            const same = new Map<string, number>();
            for (const b of expected) {
              const key = `${b.cTimeMs}|${b.businessType}|${b.coin}|${b.symbol}`;
              same.set(key, (same.get(key) ?? 0) + 1);
            }
            const crowded = new Set([...same].filter(([, n]) => n >= limit).map(([k]) => Number(k.split("|")[0])));
            expect(crowded).toContain(err.ms);
            return;
          }
          const { stored, cursors, summary } = result;
          // Exact, except where the run itself says completeness could not be proven: then every
          // bill it did not get lies in a millisecond it reported.
          const missing = expected.filter((b) => !stored.has(b.billId));
          for (const b of missing) expect(summary.unverifiedMilliseconds).toContain(b.cTimeMs);
          // Bills just outside the range (a padded query's neighbours) may be stored too: real bills,
          // exactly as served.
          const inRange = [...stored.values()].filter((b) => b.cTimeMs >= fromMs && b.cTimeMs <= toMs);
          expect(ids(inRange)).toEqual(ids(expected.filter((b) => !missing.includes(b))));
          const served = new Map(all.map((b) => [b.billId, b]));
          for (const b of stored.values()) expect(b).toEqual(served.get(b.billId));
          // The cursor only moves forward, ends at the range end.
          expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
          expect(cursors.at(-1)).toBe(toMs);
        },
      ),
      { numRuns: 60 },
    );
  });

  it.each(behaviours)(
    "splits a same-millisecond burst larger than a page by type, coin and symbol under %j",
    async (behaviour) => {
      const all: Bill[] = [];
      let id = 0;
      // Positions opened earlier (so their symbols are known), then one funding instant with 250 bills.
      for (let s = 0; s < 70; s++)
        all.push(bill(id++, 1000 + s, { symbol: `cmt_s${s}`, coin: s % 2 ? "USDC" : "USDT" }));
      for (let s = 0; s < 70; s++)
        for (const side of [0, 1])
          if (all.length < 70 + 250)
            all.push(
              bill(id++, 5000, {
                businessType: "position_funding",
                symbol: `cmt_s${s}`,
                coin: s % 2 ? "USDC" : "USDT",
                amount: String(side),
              }),
            );
      for (let k = 0; k < 30; k++) all.push(bill(id++, 5000, { businessType: "margin_move_in", symbol: `cmt_s${k}` }));
      all.push(bill(id++, 4999), bill(id++, 5001)); // neighbours inside the padded query
      const { stored, summary } = await run(all, behaviour, { fromMs: 0, toMs: 10_000, limit: 100 });
      expect(ids(stored.values())).toEqual(ids(all));
      expect(summary.splitMilliseconds).toBe(1);
      // 130 USDT funding bills needed the symbol level: fetched, but honestly reported unproven.
      expect(summary.unverifiedMilliseconds).toEqual([5000]);
    },
  );

  it.each(behaviours)("reports a burst split by businessType alone as proven complete under %j", async (behaviour) => {
    const all: Bill[] = [];
    BUSINESS_TYPES.slice(0, 5).forEach((businessType) => {
      for (let k = 0; k < 60; k++) all.push(bill(all.length, 9000, { businessType, symbol: `cmt_${k}` }));
    });
    const { stored, summary } = await run(all, behaviour, { fromMs: 1, toMs: 20_000, limit: 100 });
    expect(ids(stored.values())).toEqual(ids(all));
    expect(summary).toMatchObject({ splitMilliseconds: 1, unverifiedMilliseconds: [] });
  });

  it("fails loudly, naming the millisecond, when no filter can split it", async () => {
    const all = Array.from({ length: 150 }, (_, i) => bill(i, 7777, { businessType: "position_funding" }));
    const err = await run(all, behaviours[0]!, { fromMs: 0, toMs: 10_000, limit: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsplittableMillisecondError);
    expect((err as UnsplittableMillisecondError).ms).toBe(7777);
    expect(String(err)).toMatch(/7777 ms.*position_funding.*USDT.*cmt_btcusdt/);
  });

  it("fails loudly when a split misses bills whose symbol it cannot filter on", async () => {
    // 120 deposits at one instant with an empty symbol: symbol="" means "no filter" to the API.
    const all = Array.from({ length: 120 }, (_, i) => bill(i, 42, { businessType: "deposit", symbol: "" }));
    await expect(run(all, behaviours[1]!, { fromMs: 0, toMs: 100, limit: 100 })).rejects.toThrow(
      UnsplittableMillisecondError,
    );
  });

  it("spends few requests on sparse history: windows grow", async () => {
    const all = Array.from({ length: 50 }, (_, i) => bill(i, (i + 1) * 86_400_000));
    const { stored, summary } = await run(all, behaviours[0]!, { fromMs: 0, toMs: 50 * 86_400_000, limit: 100 });
    expect(stored.size).toBe(50);
    expect(summary.requests).toBeLessThan(20);
  });
});
