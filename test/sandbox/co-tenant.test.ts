// Other clients on the same account: a co-tenant spending a steady UID weight per second, and
// refused requests charged against the budget (as real exchanges count them).
import { afterEach, describe, expect, it } from "vitest";
import { WeightLimiter } from "../../src/sandbox/limits.ts";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { call, FIXED_END, FIXED_START } from "./helpers.ts";

const T0 = 1_000_000;
const LIMITS = { ipWeight: 1000, uidWeight: 50, windowMs: 1000 };

describe("weight limiter: co-tenant and refused requests", () => {
  it("a co-tenant at 30 weight/s holds 30 of the window; ours fit in the 20 left", () => {
    const l = new WeightLimiter(LIMITS);
    l.setCoTenant({ uidWeightPerSec: 30 }, "key", T0);
    // Its requests of 5 every 166.7 ms: by T0 + 999 six were sent, all inside the window.
    const now = T0 + 999;
    const ours = [1, 2, 3, 4, 5].map(() => l.tryConsume("ip", "key", 2, 5, now));
    expect(ours).toEqual([true, true, true, true, false]);
    expect(l.coTenantRequests).toBe(6);
    expect(l.coTenantRefused).toBe(0);
    expect(l.maxUid).toBe(50);
    // Another UID (another account) is not touched by it.
    expect(l.tryConsume("ip", "other-key", 2, 5, now)).toBe(true);
  });

  it("the co-tenant is refused too when the window is full, and counted", () => {
    const l = new WeightLimiter(LIMITS);
    for (let i = 0; i < 10; i++) expect(l.tryConsume("ip", "key", 2, 5, T0)).toBe(true);
    l.setCoTenant({ uidWeightPerSec: 30 }, "key", T0 + 1);
    // Its requests at T0+1, +167.7, ... +834.3 meet a full window (ours expire at T0 + 1000).
    expect(l.tryConsume("ip", "key", 2, 5, T0 + 999)).toBe(false);
    expect(l.coTenantRequests).toBe(6);
    expect(l.coTenantRefused).toBe(6);
  });

  it("without chargeRefused a refused request costs nothing; with it, it keeps the window full", () => {
    const free = new WeightLimiter(LIMITS);
    const charged = new WeightLimiter(LIMITS, true);
    for (const l of [free, charged]) {
      for (let i = 0; i < 10; i++) expect(l.tryConsume("ip", "key", 2, 5, T0)).toBe(true);
      // A client retrying at once after each 429, every 100 ms.
      for (let t = T0 + 100; t < T0 + 1000; t += 100) expect(l.tryConsume("ip", "key", 2, 5, t)).toBe(false);
    }
    // The first ten expire at T0 + 1000: uncharged refusals leave the window empty...
    expect(free.tryConsume("ip", "key", 2, 5, T0 + 1000)).toBe(true);
    expect(free.tryConsume("ip", "key", 2, 5, T0 + 1000)).toBe(true);
    // ...charged ones (nine, T0+100..T0+900) hold 45 of 50: one more fits, then none,
    expect(charged.tryConsume("ip", "key", 2, 5, T0 + 1000)).toBe(true);
    expect(charged.tryConsume("ip", "key", 2, 5, T0 + 1000)).toBe(false);
    // and each refusal keeps the window full (at T0+1100: 40 of the nine, 5 accepted, 5 refused at T0+1000),
    expect(charged.tryConsume("ip", "key", 2, 5, T0 + 1100)).toBe(false);
    // until the refusals of T0+100..T0+900 have all expired.
    expect(charged.tryConsume("ip", "key", 2, 5, T0 + 1901)).toBe(true);
  });

  it("a co-tenant is charged (for stats) even with limits off, and never refused", () => {
    const l = new WeightLimiter(null);
    l.setCoTenant({ uidWeightPerSec: 1000, requestWeight: 10 }, "key", T0);
    expect(l.tryConsume("ip", "key", 2, 5, T0 + 999)).toBe(true);
    expect(l.coTenantRequests).toBe(100);
    expect(l.coTenantRefused).toBe(0);
    expect(l.maxUid).toBe(1005);
  });
});

describe("sandbox co-tenant over HTTP", () => {
  let sb: Sandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  it("shows the co-tenant in stats, refuses ours beyond what it leaves, and stops with setCoTenant(null)", async () => {
    sb = await startSandbox({
      seed: 1,
      billCount: 200,
      startMs: FIXED_START,
      endMs: FIXED_END,
      limits: { ipWeight: 1000, uidWeight: 50, windowMs: 1500 },
      coTenant: { uidWeightPerSec: 20 },
    });
    await new Promise((r) => setTimeout(r, 1600)); // a whole window of its spending: 30 of 50
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(sb)).status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(5);
    expect(statuses.slice(-1)).toEqual([429]);
    const st = sb.stats();
    expect(st.coTenantRequests).toBeGreaterThanOrEqual(6);
    expect(st.rateLimited).toBe(statuses.filter((s) => s === 429).length);
    sb.setCoTenant(null);
    const stopped = sb.stats().coTenantRequests;
    await new Promise((r) => setTimeout(r, 300));
    await call(sb);
    expect(sb.stats().coTenantRequests).toBe(stopped);
    expect(() => sb!.setCoTenant({ uidWeightPerSec: 0 })).toThrow(/coTenant.uidWeightPerSec must be a number > 0/);
  });

  it("refuses bad co-tenant and chargeRefused options, naming them", async () => {
    await expect(startSandbox({ billCount: 10, coTenant: { uidWeightPerSec: -1 } })).rejects.toThrow(
      /coTenant.uidWeightPerSec must be a number > 0/,
    );
    await expect(startSandbox({ billCount: 10, coTenant: { uidWeightPerSec: 5, requestWeight: 0.5 } })).rejects.toThrow(
      /coTenant.requestWeight must be an integer >= 1/,
    );
    await expect(startSandbox({ billCount: 10, chargeRefused: "yes" as unknown as boolean })).rejects.toThrow(
      /chargeRefused must be a boolean/,
    );
  });
});
