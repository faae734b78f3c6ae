// How many requests the bills stream spends, one window at a time (as under the weight budget,
// which counts requests): a count, not a timing. A page proves a window complete only when it is
// not full, so the floor is above one request per page's worth; these bounds hold the window sizing
// (window-sizer.ts) and the pipeline's re-cutting after a full page (window-pipeline.ts) to it.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Bill } from "../../../src/exchange/bill-item.ts";
import { Prng } from "../../../src/sandbox/prng.ts";
import { syncBills } from "../../../src/streams/bills-v2/bills-stream.ts";
import { bill, modelExchange, type ModelBehaviour } from "./model-exchange.ts";

const LIMIT = 100;

/** `n` bills at uniformly random times over `spanMs`, in clumps of 1 to 3 at one instant (a trade's fills and fees). */
function clumpyHistory(n: number, spanMs: number, seed: number, fromMs = 1000): Bill[] {
  const rng = new Prng(seed, "pager-efficiency");
  const all: Bill[] = [];
  while (all.length < n) {
    const t = fromMs + rng.int(spanMs);
    const clump = 1 + rng.int(3);
    for (let k = 0; k < clump && all.length < n; k++) all.push(bill(all.length, t));
  }
  return all;
}

async function requestsFor(
  all: Bill[],
  ordering: ModelBehaviour["ordering"],
  fromMs: number,
  toMs: number,
): Promise<number> {
  const ex = modelExchange(all, { ordering, startInclusive: true, endInclusive: true, sendsHasNextPage: true });
  const stored = new Set<string>();
  const summary = await syncBills(
    { fromMs, toMs, limit: LIMIT, initialWindowMs: 60_000 },
    {
      fetchPage: ex.fetchPage,
      commitWindows: async (w) => {
        for (const b of w.bills) stored.add(b.billId);
        return {
          inserted: w.bills.length,
          revised: 0,
          upserted: w.bills.length,
          quarantined: 0,
          insertedLatenessMs: [],
        };
      },
      knownDimensions: async () => ({
        coins: ["USDT"],
        symbolsByCoin: new Map([["USDT", ["cmt_btcusdt"]]]),
        businessTypes: [],
      }),
      throttled: () => true,
      logger: pino({ level: "silent" }),
    },
  );
  expect(stored.size).toBe(all.length);
  return summary.requests;
}

describe("requests spent per page's worth of bills, one window at a time", () => {
  // Measured when written: newest first 1.42, oldest first 1.48, no usable order 1.48, density
  // change 1.53. Before the sizer pooled its density and narrowed around the served bills, and the
  // pipeline merged a narrowed window's rest into the next: 2.00, 1.69, 1.65 and 1.87.
  it.each([
    ["desc", 1.55],
    ["asc", 1.55],
    ["newest-shuffled", 1.55],
  ] as const)("steady clumpy history, %s pages: at most %s", async (ordering, bound) => {
    const all = clumpyHistory(20_000, 20_000_000, 7);
    const requests = await requestsFor(all, ordering, 0, 20_002_000);
    const ratio = requests / Math.ceil(all.length / LIMIT);
    console.log(`${ordering}: ${requests} requests for ${all.length} bills = ${ratio.toFixed(2)} x pages`);
    expect(ratio).toBeLessThanOrEqual(bound);
  });

  it("follows a density that changes tenfold, both ways", async () => {
    // Sparse, dense, sparse again: 2,000 bills per 10,000,000 ms, then 20,000 per 10,000,000 ms.
    const all = [
      ...clumpyHistory(2000, 10_000_000, 1),
      ...clumpyHistory(20_000, 10_000_000, 2, 10_001_000),
      ...clumpyHistory(2000, 10_000_000, 3, 20_001_000),
    ].map((b, i) => ({ ...b, billId: bill(i, 0).billId }));
    const requests = await requestsFor(all, "desc", 0, 30_002_000);
    const ratio = requests / Math.ceil(all.length / LIMIT);
    console.log(`density x10 and back: ${requests} requests for ${all.length} bills = ${ratio.toFixed(2)} x pages`);
    expect(ratio).toBeLessThanOrEqual(1.6);
  });
});
