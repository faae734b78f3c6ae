// A 1,000,000-bill sandbox (the benchmark's size): start-up time and memory are printed, not
// asserted (machines differ); queries must still be window-sized, not scans.
import { afterAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { billsPage, FIXED_END, FIXED_START, timeOf } from "./helpers.ts";

let sb: Sandbox | undefined;
afterAll(() => sb?.close());

describe("scale", () => {
  it("starts with 1,000,000 bills and serves pages", async () => {
    global.gc?.();
    const before = process.memoryUsage();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    sb = await startSandbox({
      seed: 1,
      billCount: 1_000_000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      bursts: 5,
      unsplittableBurst: true,
      limits: null,
    });
    const startMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    global.gc?.();
    const after = process.memoryUsage();
    const mb = (n: number) => `${(n / 1e6).toFixed(0)} MB`;
    console.log(
      `1,000,000-bill sandbox: started in ${(startMs / 1000).toFixed(2)} s ` +
        `(cpu user ${(cpu.user / 1e6).toFixed(2)} s); heap +${mb(after.heapUsed - before.heapUsed)}, ` +
        `array buffers +${mb(after.arrayBuffers - before.arrayBuffers)}, rss ${mb(after.rss)} (was ${mb(before.rss)})`,
    );

    const t1 = performance.now();
    const newest = await billsPage(sb, { limit: 100 });
    expect(newest.items).toHaveLength(100);
    expect(newest.hasNextPage).toBe(true);
    const window = await billsPage(sb, {
      startTime: FIXED_START + 86_400_000,
      endTime: FIXED_START + 86_400_000 + 600_000,
      limit: 100,
    });
    for (const i of window.items) expect(timeOf(i)).toBeGreaterThanOrEqual(FIXED_START + 86_400_000);
    const t2 = performance.now();
    await billsPage(sb, { coin: "USDC", businessType: "position_funding", limit: 100 }); // builds the filter index once
    const t3 = performance.now();
    const filtered = await billsPage(sb, {
      coin: "USDC",
      businessType: "position_funding",
      endTime: FIXED_END - 86_400_000,
      limit: 100,
    });
    const t4 = performance.now();
    for (const i of filtered.items) expect([i.coin, i.businessType]).toEqual(["USDC", "position_funding"]);
    console.log(
      `pages: two unfiltered ${(t2 - t1).toFixed(1)} ms, first filtered (index build) ${(t3 - t2).toFixed(1)} ms, ` +
        `next filtered ${(t4 - t3).toFixed(1)} ms`,
    );
    const t5 = performance.now();
    const truth = sb.truth();
    console.log(`truth() of ${truth.length} bills: ${(performance.now() - t5).toFixed(0)} ms`);
    expect(truth).toHaveLength(1_000_000);
  });
});
