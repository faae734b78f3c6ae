// Windows in flight at once (window-pipeline.ts), against the in-memory model of the endpoint.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Bill } from "../../../src/exchange/bill-item.ts";
import type { BillsQuery } from "../../../src/exchange/bills-endpoint.ts";
import type { BillsSyncSummary } from "../../../src/streams/bills-core/sync-summary.ts";
import { syncBills, type BillsRange } from "../../../src/streams/bills-v2/bills-stream.ts";
import { bill, modelExchange, type ModelBehaviour } from "./model-exchange.ts";

const logger = pino({ level: "silent" });

/** 3,000 bills, 1 to 4 per millisecond, over ~3 s of history. */
function denseHistory(): Bill[] {
  const all: Bill[] = [];
  let t = 1000;
  while (all.length < 3000) {
    const n = 1 + (all.length % 4);
    for (let k = 0; k < n && all.length < 3000; k++) all.push(bill(all.length, t));
    t += 1 + (all.length % 3);
  }
  return all;
}

interface Harness {
  stored: Map<string, Bill>;
  cursors: number[];
  maxInFlight: number;
  /** Queries in the order they were sent (the model records them when it answers). */
  sent: BillsQuery[];
  /** Requests called off by the stream (their signal aborted while they waited). */
  calledOff: number;
  /** Requests in flight when each request was sent (itself included). */
  inFlightAtSend: number[];
}

async function run(
  all: Bill[],
  behaviour: ModelBehaviour,
  range: BillsRange,
  opts: {
    delay?: (q: BillsQuery) => number;
    failWhen?: (q: BillsQuery) => boolean;
    throttled?: () => boolean /** A called-off request ends this long after its abort (a socket closing). */;
    abortLagMs?: number;
  } = {},
) {
  const ex = modelExchange(all, behaviour);
  const h: Harness = { stored: new Map(), cursors: [], maxInFlight: 0, sent: [], calledOff: 0, inFlightAtSend: [] };
  let inFlight = 0;
  const summary = await syncBills(range, {
    fetchPage: async (q, signal) => {
      h.sent.push(q);
      inFlight++;
      h.inFlightAtSend.push(inFlight);
      h.maxInFlight = Math.max(h.maxInFlight, inFlight);
      try {
        const ms = opts.delay?.(q) ?? 0;
        // The wait ends early when the stream calls the request off (as a socket closed would).
        if (ms > 0)
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, ms);
            signal?.addEventListener(
              "abort",
              () => {
                clearTimeout(t);
                setTimeout(resolve, opts.abortLagMs ?? 0);
              },
              { once: true },
            );
          });
        if (signal?.aborted) h.calledOff++;
        signal?.throwIfAborted();
        if (opts.failWhen?.(q)) throw new Error(`exchange down for ${q.startTime}`);
        return await ex.fetchPage(q);
      } finally {
        inFlight--;
      }
    },
    commitWindows: async (w) => {
      for (const b of w.bills) h.stored.set(b.billId, b);
      h.cursors.push(w.cursorMs);
      return { inserted: w.bills.length, revised: 0, upserted: w.bills.length, quarantined: 0, insertedLatenessMs: [] };
    },
    knownDimensions: async () => ({
      coins: ["USDT"],
      symbolsByCoin: new Map([["USDT", ["cmt_btcusdt"]]]),
      businessTypes: [],
    }),
    throttled: opts.throttled,
    logger,
  }).catch((err: unknown) => err);
  // Requests called off may end just after the run returns (the stream does not wait for them).
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  return { summary, calls: ex.calls, ...h };
}

const exact = (b: Partial<ModelBehaviour> & Pick<ModelBehaviour, "ordering">): ModelBehaviour => ({
  startInclusive: true,
  endInclusive: true,
  sendsHasNextPage: true,
  ...b,
});
const ids = (bills: Iterable<Bill>) => [...bills].map((b) => b.billId).sort();

/** Even history (a bill every 3 ms from 1000): pages never full, so no window is re-planned. */
const evenHistory = (n: number) => Array.from({ length: n }, (_, i) => bill(i, 1000 + i * 3));
const HEDGE_FAST = { minMs: 150, factor: 4 };
const sameRange = (a: BillsQuery, b: BillsQuery) => a.startTime === b.startTime && a.endTime === b.endTime;

/** A delay function that stalls the first request past 2000 ms for `stallMs`; the rest take 1 ms. */
function stallOnce(stallMs: number): { delay: (q: BillsQuery) => number; stalled: () => BillsQuery | undefined } {
  let stalled: BillsQuery | undefined;
  return {
    delay: (q) => {
      if (stalled === undefined && q.startTime > 2000) {
        stalled = q;
        return stallMs;
      }
      return 1;
    },
    stalled: () => stalled,
  };
}

describe("windows in flight", () => {
  it("keeps up to `concurrency` requests in flight and commits in time order", async () => {
    const all = denseHistory();
    const r = await run(
      all,
      exact({ ordering: "desc" }),
      { fromMs: 0, toMs: 10_000, limit: 100, initialWindowMs: 20, concurrency: 3 },
      { delay: () => 5 },
    );
    if (r.summary instanceof Error) throw r.summary;
    expect(ids(r.stored.values())).toEqual(ids(all));
    expect(r.maxInFlight).toBe(3);
    expect(r.cursors).toEqual([...r.cursors].sort((a, b) => a - b));
    expect(r.cursors.at(-1)).toBe(10_000);
  });

  it("asks one window at a time while the weight budget sets the pace", async () => {
    const all = denseHistory();
    let throttled = false;
    const r = await run(
      all,
      exact({ ordering: "desc" }),
      { fromMs: 0, toMs: 10_000, limit: 100, initialWindowMs: 20, concurrency: 4 },
      {
        delay: (q) => {
          if (q.startTime > 3000) throttled = true; // the budget starts to bind part-way
          return 2;
        },
        throttled: () => throttled,
      },
    );
    if (r.summary instanceof Error) throw r.summary;
    expect(ids(r.stored.values())).toEqual(ids(all));
    const afterThrottle = r.sent.findIndex((q) => q.startTime > 3000);
    expect(r.maxInFlight).toBe(4); // before
    expect(r.inFlightAtSend.slice(afterThrottle + 4).every((n) => n <= 1)).toBe(true); // after: one at a time
  });

  it("fetches later windows while one request stalls", async () => {
    // Even density, pages never full: no window is re-planned, so the stalled one is answered.
    const all = Array.from({ length: 2500 }, (_, i) => bill(i, 1000 + i * 3));
    let stalled: BillsQuery | undefined;
    const r = await run(
      all,
      exact({ ordering: "desc" }),
      { fromMs: 1000, toMs: 8500, limit: 100, initialWindowMs: 20, concurrency: 4, hedge: false },
      {
        delay: (q) => {
          if (stalled === undefined && q.startTime > 2000) {
            stalled = q;
            return 300;
          }
          return 1;
        },
      },
    );
    if (r.summary instanceof Error) throw r.summary;
    expect(ids(r.stored.values())).toEqual(ids(all));
    // Sent while the stalled one was out (it takes 300 ms; the others 1 ms): far more than the
    // other three requests in flight, because answered windows wait in order behind it.
    const sentAfter = r.sent.slice(r.sent.indexOf(stalled!) + 1);
    const answeredBefore = r.calls.indexOf(stalled!);
    expect(answeredBefore - r.sent.indexOf(stalled!)).toBeGreaterThan(10);
    expect(sentAfter.length).toBeGreaterThan(10);
  });

  it("calls off wider windows still unanswered when the head comes back full, and stays exact", async () => {
    // Sparse first (windows grow wide), then dense: the wide windows sent ahead come back full.
    const sparse = Array.from({ length: 40 }, (_, i) => bill(10_000 + i, 10 + i * 50));
    const dense = denseHistory();
    const all = [...sparse, ...dense.map((b) => ({ ...b, cTimeMs: b.cTimeMs + 2000 }))];
    const r = await run(
      all,
      exact({ ordering: "desc" }),
      { fromMs: 0, toMs: 10_000, limit: 100, initialWindowMs: 100, concurrency: 4 },
      { delay: (q) => (q.startTime > 2500 ? 20 : 2) },
    );
    if (r.summary instanceof Error) throw r.summary;
    expect(ids(r.stored.values())).toEqual(ids(all));
    expect(r.calledOff).toBeGreaterThan(0);
    expect(r.cursors.at(-1)).toBe(10_000);
  });

  it("one failing window fails the run: nothing at or after it is committed, the rest is stopped", async () => {
    const all = denseHistory();
    const r = await run(
      all,
      exact({ ordering: "asc" }),
      { fromMs: 0, toMs: 10_000, limit: 100, initialWindowMs: 20, concurrency: 4 },
      {
        delay: () => 2,
        failWhen: (q) => q.startTime <= 2550 && q.endTime >= 2550,
      },
    );
    expect(r.summary).toBeInstanceOf(Error);
    expect(String(r.summary)).toMatch(/exchange down for \d+/);
    expect(Math.max(...r.cursors)).toBeLessThan(2550);
    for (const b of r.stored.values()) expect(b.cTimeMs).toBeLessThanOrEqual(Math.max(...r.cursors));
    expect(r.maxInFlight).toBeLessThanOrEqual(4);
  });

  it("asks a stalled head window again, uses the first answer and calls off the other request", async () => {
    const all = evenHistory(2500);
    const stall = stallOnce(60_000); // a stall that never ends on its own
    const r = await run(
      all,
      exact({ ordering: "desc" }),
      { fromMs: 1000, toMs: 8500, limit: 100, initialWindowMs: 20, concurrency: 4, hedge: HEDGE_FAST },
      { delay: stall.delay },
    );
    if (r.summary instanceof Error) throw r.summary;
    expect(ids(r.stored.values())).toEqual(ids(all));
    expect(r.sent.filter((q) => sameRange(q, stall.stalled()!))).toHaveLength(2);
    expect(r.calls).not.toContain(stall.stalled()); // its answer was never used: the hedge's was
    // (At least: on a loaded machine another head may also be slow enough to be hedged.)
    expect((r.summary as BillsSyncSummary).requestsHedged).toBeGreaterThanOrEqual(1);
    expect(r.calledOff).toBeGreaterThanOrEqual(1);
    expect((r.summary as BillsSyncSummary).requestsCalledOff).toBeGreaterThanOrEqual(1);
  });

  it("keeps a window whose first request answers even when its hedge fails", async () => {
    const all = evenHistory(2500);
    const stall = stallOnce(400);
    const r = await run(
      all,
      exact({ ordering: "desc" }),
      { fromMs: 1000, toMs: 8500, limit: 100, initialWindowMs: 20, concurrency: 4, hedge: HEDGE_FAST },
      {
        delay: stall.delay,
        failWhen: (q) => stall.stalled() !== undefined && q !== stall.stalled() && sameRange(q, stall.stalled()!),
      },
    );
    if (r.summary instanceof Error) throw r.summary;
    expect(ids(r.stored.values())).toEqual(ids(all));
    expect((r.summary as BillsSyncSummary).requestsHedged).toBeGreaterThanOrEqual(1);
    expect(r.calls).toContain(stall.stalled());
  });

  it("never hedges before the run has answered a few windows: there is no typical time to call it slow", async () => {
    const all = evenHistory(1200);
    // Every request is slower than the hedge's minimum; the first windows of the run are among them.
    const r = await run(
      all,
      exact({ ordering: "desc" }),
      { fromMs: 1000, toMs: 1040, limit: 100, initialWindowMs: 20, concurrency: 4, hedge: HEDGE_FAST },
      { delay: () => 400 },
    );
    if (r.summary instanceof Error) throw r.summary;
    expect(ids(r.stored.values())).toEqual(ids(all.filter((b) => b.cTimeMs <= 1040)));
    expect((r.summary as BillsSyncSummary).requestsHedged).toBe(0);
  });

  it("never hedges while the weight budget sets the pace", async () => {
    const all = evenHistory(1200);
    const stall = stallOnce(300);
    const r = await run(
      all,
      exact({ ordering: "desc" }),
      { fromMs: 1000, toMs: 4700, limit: 100, initialWindowMs: 20, concurrency: 4, hedge: HEDGE_FAST },
      { delay: stall.delay, throttled: () => true },
    );
    if (r.summary instanceof Error) throw r.summary;
    expect(ids(r.stored.values())).toEqual(ids(all));
    expect((r.summary as BillsSyncSummary).requestsHedged).toBe(0);
    expect(r.sent.filter((q) => sameRange(q, stall.stalled()!))).toHaveLength(1);
  });

  it("goes on when the only in-flight place is held by a hedge race's loser that has not ended yet", async () => {
    // One window at a time: after the hedge answers, the called-off first request still holds the
    // only place for a while, so nothing can be launched when the next head is asked for.
    const all = evenHistory(1200);
    const stall = stallOnce(60_000);
    const r = await run(
      all,
      exact({ ordering: "desc" }),
      { fromMs: 1000, toMs: 4700, limit: 100, initialWindowMs: 20, concurrency: 1, hedge: HEDGE_FAST },
      { delay: stall.delay, abortLagMs: 50 },
    );
    if (r.summary instanceof Error) throw r.summary;
    expect(ids(r.stored.values())).toEqual(ids(all));
    expect((r.summary as BillsSyncSummary).requestsHedged).toBeGreaterThanOrEqual(1);
  });
});
