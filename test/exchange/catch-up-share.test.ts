// @module-tag redis
// The catch-up share on real Redis: requests made while catching up (inCatchUp) take at most
// BACKFILL_IP_SHARE of the egress IP budget together, across processes; other requests of the
// same egress, and of the same account, are not held back by it.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { redisBudgetGates, type BudgetGates } from "../../src/exchange/budget-gates.ts";
import { inCatchUp, isCatchingUp } from "../../src/exchange/catch-up-share.ts";
import type { Permit } from "../../src/exchange/weight-gate.ts";
import { createLogger } from "../../src/log/logger.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let redis: TestRedis;
const clients: Redis[] = [];
const all: BudgetGates[] = [];
beforeAll(async () => {
  redis = await createTestRedis();
});
afterAll(async () => {
  await Promise.all(all.map((g) => g.close()));
  await Promise.all(clients.map((c) => c.quit()));
  await redis.cleanup();
});

/** One process's gates: its own Redis connection, the shared keys. */
function processGates(egress: string): BudgetGates {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  clients.push(client);
  const config = loadConfig({
    QUEUE_PREFIX: redis.prefix,
    EGRESS_ID: egress,
    RATE_LIMIT_IP_WEIGHT: "100",
    RATE_LIMIT_UID_WEIGHT: "100",
    // Long enough that nothing granted here expires while the test looks.
    RATE_LIMIT_WINDOW_MS: "60000",
    BACKFILL_IP_SHARE: "0.5",
    // The whole IP budget, so the figures below are round.
    RATE_LIMIT_IP_HEADROOM: "0",
  });
  const gates = redisBudgetGates(config, client, createLogger("silent"));
  all.push(gates);
  return gates;
}

/** Whether acquire() is granted within `ms` (a waiting acquire is called off afterwards). */
async function grantedWithin(acquire: (signal: AbortSignal) => Promise<Permit>, ms = 300): Promise<boolean> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(new Error("not granted")), ms);
  try {
    (await acquire(stop.signal)).settle();
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

const cost = { ip: 2, uid: 2 };

describe("catch-up share of the IP budget", () => {
  it("knows which requests are catching up, through awaits", async () => {
    expect(isCatchingUp()).toBe(false);
    expect(
      await inCatchUp(async () => {
        await new Promise((r) => setTimeout(r, 5));
        return isCatchingUp();
      }),
    ).toBe(true);
    expect(isCatchingUp()).toBe(false);
  });

  it("caps catching-up requests of every process of an egress at the share; the rest still go", async () => {
    const a = processGates("egress-share");
    const b = processGates("egress-share");
    // Two accounts catching up on two processes: 25 requests of weight 2 fill the share of 50.
    for (let i = 0; i < 25; i++) {
      const gate = (i % 2 === 0 ? a : b).forAccount(`backfilling-${i % 2}`);
      expect(await inCatchUp(() => grantedWithin((s) => gate.acquire(cost, s)))).toBe(true);
    }
    const next = b.forAccount("backfilling-1");
    expect(await inCatchUp(() => grantedWithin((s) => next.acquire(cost, s)))).toBe(false);
    // A current account on the same egress, and the backfilling account's own other requests, go.
    expect(await grantedWithin((s) => a.forAccount("current").acquire(cost, s))).toBe(true);
    expect(await grantedWithin((s) => next.acquire(cost, s))).toBe(true);
    // Another egress has its own share.
    const other = processGates("egress-other").forAccount("backfilling-2");
    expect(await inCatchUp(() => grantedWithin((s) => other.acquire(cost, s)))).toBe(true);
  });

  it("the share never lets catching-up requests past the IP budget itself", async () => {
    const g = processGates("egress-full");
    // Fill the IP budget (100) with current requests of several accounts.
    for (let i = 0; i < 50; i++)
      expect(await grantedWithin((s) => g.forAccount(`c${i % 10}`).acquire(cost, s))).toBe(true);
    expect(await inCatchUp(() => grantedWithin((s) => g.forAccount("late").acquire(cost, s)))).toBe(false);
  });

  it("an IP budget that held back one account's request tells every account of the process", async () => {
    const g = processGates("egress-pressure");
    const elsewhere = processGates("egress-calm");
    const quiet = g.forAccount("quiet");
    expect(quiet.recentlyHeldBack(60_000)).toBe(false);
    for (let i = 0; i < 50; i++) expect(await grantedWithin((s) => g.forAccount("busy").acquire(cost, s))).toBe(true);
    expect(quiet.recentlyHeldBack(60_000)).toBe(false);
    // The budget is full: the next request waits, and is held back.
    expect(await grantedWithin((s) => g.forAccount("busy").acquire(cost, s))).toBe(false);
    // The quiet account never asked, yet knows the budget sets the pace (it sends no hedges).
    expect(quiet.recentlyHeldBack(60_000)).toBe(true);
    expect(g.forAccount("new").recentlyHeldBack(60_000)).toBe(true);
    // Another egress's accounts are not told.
    expect(elsewhere.forAccount("quiet").recentlyHeldBack(60_000)).toBe(false);
  });

  it("a share that held back catching-up requests tells catching-up requests only", async () => {
    const g = processGates("egress-share-pressure");
    for (let i = 0; i < 25; i++)
      expect(await inCatchUp(() => grantedWithin((s) => g.forAccount("bf").acquire(cost, s)))).toBe(true);
    expect(await inCatchUp(() => grantedWithin((s) => g.forAccount("bf").acquire(cost, s)))).toBe(false);
    const other = g.forAccount("other");
    expect(await inCatchUp(async () => other.recentlyHeldBack(60_000))).toBe(true);
    expect(other.recentlyHeldBack(60_000)).toBe(false);
  });
});
