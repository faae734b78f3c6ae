// The allowance rules (allowance.ts), on their own and as both gates apply them: the in-process
// gate on a virtual clock, the Redis gate shared by two processes.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALLOWANCE_RULES, Allowance, blamedBudget } from "../../src/exchange/allowance.ts";
import { RedisWeightGate } from "../../src/exchange/redis-weight-gate.ts";
import { SlidingWindowGate } from "../../src/exchange/weight-gate.ts";
import { virtualTime } from "../support/virtual-time.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

const { decrease, growth } = ALLOWANCE_RULES;

describe("allowance rules", () => {
  it("a 429 cuts to 85% of what the exchange granted, once per crowding", () => {
    const a = new Allowance(500);
    expect(a.cut(200, 10, 20)).toBe(true);
    expect(a.value).toBe(decrease * 200);
    // A request sent before that cut was refused in the same crowding: no second cut.
    expect(a.cut(150, 15, 25)).toBe(false);
    expect(a.value).toBe(decrease * 200);
    // Nor one sent in the very millisecond of the cut (it was granted before the pause began).
    expect(a.cut(150, 20, 26)).toBe(false);
    expect(a.value).toBe(decrease * 200);
    // One sent after it is news.
    expect(a.cut(160, 30, 40)).toBe(true);
    expect(a.value).toBe(decrease * 160);
  });

  it("never cuts below the floor, and never cuts by more than the weight the exchange granted", () => {
    const a = new Allowance(500);
    a.cut(2, 0, 1);
    expect(a.value).toBe(ALLOWANCE_RULES.floor * 500);
    const b = new Allowance(500);
    b.cut(10_000, 0, 1); // more weight in the window than the allowance: the allowance is what counts
    expect(b.value).toBe(decrease * 500);
  });

  it("climbs back by whole weights up to the threshold, then by 1.5% of each weight", () => {
    // A 429 that met little of our weight (others held the budget): quick climb to 85% of before.
    const a = new Allowance(500);
    a.cut(5, 0, 1);
    expect(a.snapshot().threshold).toBe(decrease * 500);
    let answered = 0;
    while (a.value < decrease * 500) {
      a.grow(5);
      answered++;
    }
    expect(answered).toBe(Math.ceil((decrease * 500 - ALLOWANCE_RULES.floor * 500) / 5));
    const atThreshold = a.value;
    a.grow(5);
    expect(a.value).toBeCloseTo(atThreshold + growth * 5, 9);
    // Never above the configured budget.
    for (let i = 0; i < 100_000; i++) a.grow(5);
    expect(a.value).toBe(500);
  });

  it("after a 429 that met our own weight, probes slowly from there", () => {
    const a = new Allowance(500);
    a.grow(5); // at the budget: nothing to grow
    expect(a.value).toBe(500);
    a.cut(500, 0, 1);
    expect(a.snapshot()).toMatchObject({ value: decrease * 500, threshold: decrease * 500 });
    a.grow(5);
    expect(a.value).toBeCloseTo(decrease * 500 + growth * 5, 9);
  });

  it("only the first cut keeps a quick climb: later ones probe slowly from the rate measured", () => {
    const a = new Allowance(500);
    a.cut(5, 0, 1); // first: threshold 85% of the budget
    for (let i = 0; i < 30; i++) a.grow(5);
    expect(a.value).toBe(25 + 150);
    a.cut(100, 2, 3); // granted 100 in the window: 85, and slow probing from there
    expect(a.snapshot()).toMatchObject({ value: decrease * 100, threshold: decrease * 100 });
    a.grow(5);
    expect(a.value).toBeCloseTo(decrease * 100 + growth * 5, 9);
  });

  it("blames the budget we used the larger share of", () => {
    expect(blamedBudget({ ip: 80, uid: 200 }, { ip: 500, uid: 500 })).toBe("uid");
    expect(blamedBudget({ ip: 400, uid: 200 }, { ip: 500, uid: 500 })).toBe("ip");
  });
});

describe("in-process gate", () => {
  it("holds requests to the allowance after a 429 and pauses a whole window", async () => {
    const t = virtualTime();
    const gate = new SlidingWindowGate({ ip: 1000, uid: 100, windowMs: 1000 }, t.clock, t.sleep);
    const permits = [];
    for (let i = 0; i < 8; i++) permits.push(await gate.acquire({ ip: 2, uid: 5 }));
    for (const p of permits.slice(0, 7)) p.settle();
    // The eighth is refused: of the 40 UID weight in our window, the exchange granted 35.
    const refusedAt = t.now();
    expect(permits[7]!.refused(200)).toBe(1000); // the window, longer than Retry-After
    expect(gate.allowance()).toEqual({ ip: 1000, uid: decrease * 35 });
    // Nothing goes before the window has passed...
    await gate.acquire({ ip: 2, uid: 5 }).then((p) => p.settle(1));
    expect(t.now() - refusedAt).toBeGreaterThanOrEqual(1000);
    // ...and then at most the allowance (29.75: five requests of 5) per window, not the budget's 100,
    // while nothing is answered (settled as unanswered, the allowance cannot grow).
    const sent = [t.now()];
    for (let i = 0; i < 20; i++) {
      const p = await gate.acquire({ ip: 2, uid: 5 });
      sent.push(t.now());
      p.settle(1);
    }
    for (const at of sent) expect(sent.filter((s) => s > at - 1000 && s <= at).length).toBeLessThanOrEqual(5);
    expect(gate.allowance().uid).toBe(decrease * 35);
  });

  it("climbs back quickly after a 429 that met little of its own weight (a crowd before it started)", async () => {
    const t = virtualTime();
    const gate = new SlidingWindowGate({ ip: 1000, uid: 100, windowMs: 1000 }, t.clock, t.sleep);
    (await gate.acquire({ ip: 2, uid: 5 })).refused();
    expect(gate.allowance().uid).toBe(ALLOWANCE_RULES.floor * 100);
    // Slow start: each answered request adds its weight, up to 85% of the budget; then 1.5% of it.
    for (let i = 0; i < 15; i++) (await gate.acquire({ ip: 2, uid: 5 })).settle();
    expect(gate.allowance().uid).toBe(80);
    (await gate.acquire({ ip: 2, uid: 5 })).settle();
    expect(gate.allowance().uid).toBe(85);
    (await gate.acquire({ ip: 2, uid: 5 })).settle();
    expect(gate.allowance().uid).toBeCloseTo(85 + growth * 5, 9);
  });
});

describe("Redis gate", () => {
  let redis: TestRedis;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await createTestRedis();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
    await redis.cleanup();
  });
  function processGate(keys: string) {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    clients.push(client);
    return new RedisWeightGate({
      redis: client,
      ip: { key: `${keys}:ip`, limit: 1000 },
      uid: { key: `${keys}:uid`, limit: 100 },
      windowMs: 1000,
      maxInFlightMs: 5000,
    });
  }

  it("shares the allowance a 429 taught one process with every other, and grows it as requests are answered", async () => {
    const keys = `${redis.prefix}:allow:${Date.now()}`;
    const one = processGate(keys);
    const other = processGate(keys);
    const permits = [];
    for (let i = 0; i < 8; i++) permits.push(await one.acquire({ ip: 2, uid: 5 }));
    for (const p of permits.slice(0, 7)) p.settle();
    const t0 = Date.now();
    expect(permits[7]!.refused()).toBe(1000);
    // A second 429 of the same crowding (sent before the cut) changes nothing.
    await one.drain();
    // Of the 40 UID weight in the window the exchange granted 35 (the refused charge stays, marked).
    const late = await redis.client.hgetall(`${keys}:uid:allow`);
    expect(Number(late.v)).toBeCloseTo(decrease * 35, 9);
    expect(await redis.client.get(`${keys}:uid:sum`)).toBe("40");
    expect(await other.allowanceNow()).toEqual({ ip: 1000, uid: decrease * 35 });
    // The other process sits out the pause, then is held to the allowance (29.75: 5 requests of 5)
    // while nothing is answered.
    const sent: number[] = [];
    for (let i = 0; i < 6; i++) {
      const p = await other.acquire({ ip: 2, uid: 5 });
      sent.push(p.grantedAt);
      p.settle(1);
    }
    await other.drain();
    expect(sent[0]! - t0).toBeGreaterThanOrEqual(990);
    expect(sent[5]! - sent[0]!).toBeGreaterThanOrEqual(900); // the sixth waited for the first to expire
    expect((await one.allowanceNow()).uid).toBeCloseTo(decrease * 35, 9);
    // Answered, each request grows it in every process: slow start, by its whole weight (the
    // threshold is 85% of the budget before the cut).
    for (let i = 0; i < 3; i++) (await one.acquire({ ip: 2, uid: 5 })).settle();
    await one.drain();
    expect((await other.allowanceNow()).uid).toBeCloseTo(decrease * 35 + 15, 9);
    // The allowance is remembered, but not forever.
    const ttl = await redis.client.pttl(`${keys}:uid:allow`);
    expect(ttl).toBeGreaterThan(3_000_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
  });
});
