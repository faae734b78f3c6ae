// Sliding-window weight budgets (bills: IP 2 / UID 5; account: IP 1 / UID 1).
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { ACCOUNT, call, FIXED_END, FIXED_START } from "./helpers.ts";

const opened: Sandbox[] = [];
async function sandbox(limits: { ipWeight: number; uidWeight: number; windowMs: number } | null): Promise<Sandbox> {
  const sb = await startSandbox({ seed: 1, billCount: 200, startMs: FIXED_START, endMs: FIXED_END, limits });
  opened.push(sb);
  return sb;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("weight limits", () => {
  it("refuses with 429 once the UID budget is spent, and refused requests consume nothing", async () => {
    const windowMs = 1500;
    const sb = await sandbox({ ipWeight: 1000, uidWeight: 50, windowMs });
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      const r = await call(sb);
      statuses.push(r.status);
      if (r.status === 429) expect(JSON.parse(r.text)).toEqual({ code: "429", msg: "Too Many Requests" });
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(10); // 10 x UID 5 = 50
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    const st = sb.stats();
    expect(st.rateLimited).toBe(4);
    expect(st.maxUidWeightInWindow).toBe(50);
    expect(st.maxIpWeightInWindow).toBe(20);
    expect(st.byStatus).toEqual({ "200": 10, "429": 4 });
    // Once the accepted requests leave the window the full budget is back, which would not be
    // the case if the 429s had been charged (they were sent later).
    await sleep(windowMs + 100);
    for (let i = 0; i < 10; i++) expect((await call(sb)).status).toBe(200);
    expect((await call(sb)).status).toBe(429);
    expect(sb.stats().maxUidWeightInWindow).toBe(50);
  });

  it("counts the IP budget independently (account endpoint: 1/1)", async () => {
    const sb = await sandbox({ ipWeight: 5, uidWeight: 1000, windowMs: 10_000 });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await call(sb, { method: "GET", path: ACCOUNT, query: "coinId=2" })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    // A bills request costs IP 2: still refused.
    expect((await call(sb)).status).toBe(429);
    expect(sb.stats().maxIpWeightInWindow).toBe(5);
  });

  it("never lets accepted weight exceed the budget under concurrency", async () => {
    const sb = await sandbox({ ipWeight: 100, uidWeight: 120, windowMs: 60_000 });
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 3 === 0 ? call(sb, { method: "GET", path: ACCOUNT, query: "coinId=2" }) : call(sb),
      ),
    );
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBeGreaterThan(0);
    expect(results.filter((r) => r.status === 429).length).toBe(60 - ok);
    const st = sb.stats();
    expect(st.maxIpWeightInWindow).toBeLessThanOrEqual(100);
    expect(st.maxUidWeightInWindow).toBeLessThanOrEqual(120);
    expect(st.rateLimited).toBe(60 - ok);
  });

  it("does not limit with limits: null but still reports the weight seen in 10 s", async () => {
    const sb = await sandbox(null);
    for (let i = 0; i < 120; i++) expect((await call(sb)).status).toBe(200);
    expect(sb.stats().maxUidWeightInWindow).toBe(600);
    expect(sb.stats().maxIpWeightInWindow).toBe(240);
    sb.resetStats();
    expect(sb.stats()).toMatchObject({ requests: 0, maxUidWeightInWindow: 0, rateLimited: 0 });
  });
});
