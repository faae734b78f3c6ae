import { describe, expect, it } from "vitest";
import { SlidingWindowGate } from "../../src/exchange/weight-gate.ts";
import { virtualTime } from "../support/virtual-time.ts";

describe("sliding-window weight gate", () => {
  it("says which permits a full budget held back (not those that only sat out a pause)", async () => {
    const t = virtualTime();
    const gate = new SlidingWindowGate({ ip: 2, uid: 2, windowMs: 1000 }, t.clock, t.sleep);
    const held = async () => {
      const p = await gate.acquire({ ip: 1, uid: 1 });
      p.settle();
      return p.heldBack;
    };
    expect([await held(), await held(), await held()]).toEqual([false, false, true]);
    await t.sleep(5000);
    expect(await held()).toBe(false);
    gate.pauseUntil(t.now() + 500);
    const before = t.now();
    expect(await held()).toBe(false);
    expect(t.now() - before).toBeGreaterThanOrEqual(500); // it did sit the pause out
  });

  it("never lets the charged weight in any window exceed either budget", async () => {
    const t = virtualTime();
    const gate = new SlidingWindowGate({ ip: 20, uid: 50, windowMs: 1000 }, t.clock, t.sleep);
    const sent: number[] = [];
    for (let i = 0; i < 60; i++) {
      const permit = await gate.acquire({ ip: 2, uid: 5 });
      sent.push(t.now());
      permit.settle();
    }
    // UID budget 50 / weight 5 = 10 requests per window.
    for (const at of sent) expect(sent.filter((s) => s > at - 1000 && s <= at).length).toBeLessThanOrEqual(10);
    // ...and it is not needlessly slow: 60 requests need about 5 full windows.
    expect(t.now() - 1_000_000).toBeLessThan(6 * 1000 + 10);
  });

  it("counts in-flight requests until they settle, then for a full window after", async () => {
    const t = virtualTime();
    const gate = new SlidingWindowGate({ ip: 1, uid: 1, windowMs: 100 }, t.clock, t.sleep);
    const first = await gate.acquire({ ip: 1, uid: 1 });
    let secondAt = 0;
    const second = gate.acquire({ ip: 1, uid: 1 }).then((p) => {
      secondAt = t.now();
      return p;
    });
    await t.sleep(500); // request in flight for 500 ms
    first.settle();
    const settledAt = t.now();
    (await second).settle();
    expect(secondAt).toBeGreaterThanOrEqual(settledAt + 100);
  });

  it("keeps a charge settled with mayStillArriveMs in flight that long, then counts it a full window", async () => {
    const t = virtualTime();
    const gate = new SlidingWindowGate({ ip: 1, uid: 1, windowMs: 100 }, t.clock, t.sleep);
    const givenUp = await gate.acquire({ ip: 1, uid: 1 });
    givenUp.settle(300); // no answer: the request may still reach the exchange within 300 ms
    const settledAt = t.now();
    (await gate.acquire({ ip: 1, uid: 1 })).settle();
    expect(t.now()).toBeGreaterThanOrEqual(settledAt + 300 + 100);
  });

  it("holds everything back after pauseUntil (a 429 from the exchange)", async () => {
    const t = virtualTime();
    const gate = new SlidingWindowGate({ ip: 100, uid: 100, windowMs: 100 }, t.clock, t.sleep);
    gate.pauseUntil(t.now() + 5000);
    const start = t.now();
    (await gate.acquire({ ip: 1, uid: 1 })).settle();
    expect(t.now() - start).toBeGreaterThanOrEqual(5000);
  });

  it("refuses a request heavier than the whole budget instead of waiting forever", async () => {
    const gate = new SlidingWindowGate({ ip: 1, uid: 1, windowMs: 100 });
    await expect(gate.acquire({ ip: 2, uid: 5 })).rejects.toThrow(/exceeds the whole budget/);
  });
});
