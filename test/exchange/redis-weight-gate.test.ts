// @module-tag redis
// RedisWeightGate against a real Redis. Several gates with their own ioredis connections but the
// same keys stand for worker processes on different machines.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisReconnections } from "../../src/exchange/redis-reconnections.ts";
import { RedisWeightGate, type RedisWeightGateOptions } from "../../src/exchange/redis-weight-gate.ts";
import type { Weight } from "../../src/exchange/weights.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let redis: TestRedis;
const clients: Redis[] = [];
const gates: RedisWeightGate[] = [];
let keySeq = 0;

beforeAll(async () => {
  redis = await createTestRedis();
});

afterAll(async () => {
  await Promise.all(gates.map((g) => g.drain()));
  await Promise.all(clients.map((c) => c.quit()));
  await redis.cleanup();
});

/** A fresh key under this file's prefix. */
function key(name: string): string {
  return `${redis.prefix}:w:${name}:${keySeq++}`;
}

/** A gate on its own connection: one simulated process. */
function processGate(o: Omit<RedisWeightGateOptions, "redis">): RedisWeightGate {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  clients.push(client);
  const gate = new RedisWeightGate({ ...o, redis: client });
  gates.push(gate);
  return gate;
}

/** `n` processes sharing fresh IP and UID budgets of `limit` each. */
function processes(n: number, limit: number, o: { windowMs: number; maxInFlightMs: number }) {
  const ip = { key: key("ip"), limit };
  const uid = { key: key("uid"), limit };
  return { ip, uid, gates: Array.from({ length: n }, () => processGate({ ip, uid, ...o })) };
}

interface Grant {
  at: number;
  cost: Weight;
  account: string;
}

/** The largest weight acquired within any window (t - windowMs, t], per the picked budget. */
function maxInAnyWindow(grants: Grant[], windowMs: number, weight: (g: Grant) => number): number {
  const sorted = [...grants].sort((a, b) => a.at - b.at);
  let max = 0;
  let sum = 0;
  let lo = 0;
  for (const g of sorted) {
    sum += weight(g);
    while (sorted[lo]!.at <= g.at - windowMs) sum -= weight(sorted[lo++]!);
    max = Math.max(max, sum);
  }
  return max;
}

/** `requests` acquire/hold/settle cycles on `gate`, `concurrency` at a time; holds 0–30 ms. */
async function hammer(
  gate: RedisWeightGate,
  account: string,
  cost: Weight,
  requests: number,
  concurrency: number,
  grants: Grant[],
) {
  let left = requests;
  const worker = async () => {
    while (left > 0) {
      left--;
      const permit = await gate.acquire(cost);
      grants.push({ at: permit.grantedAt, cost, account });
      await new Promise((r) => setTimeout(r, Math.random() * 30));
      permit.settle();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

describe("RedisWeightGate", () => {
  it("says which permits the budget held back: not those granted at once, however long the queue of waiters took", async () => {
    const [gate] = processes(1, 1000, { windowMs: 1000, maxInFlightMs: 5000 }).gates as [RedisWeightGate];
    // 50 acquires at once: they take turns (one Redis round trip each), and none is held back.
    const quick = await Promise.all(Array.from({ length: 50 }, () => gate.acquire({ ip: 1, uid: 1 })));
    expect(quick.filter((p) => p.heldBack)).toHaveLength(0);
    for (const p of quick) p.settle();
    const [small] = processes(1, 1, { windowMs: 100, maxInFlightMs: 5000 }).gates as [RedisWeightGate];
    const first = await small.acquire({ ip: 1, uid: 1 });
    first.settle();
    const second = await small.acquire({ ip: 1, uid: 1 });
    second.settle();
    expect([first.heldBack, second.heldBack]).toEqual([false, true]);
    // Sitting out a pause (another process's 429) with room in the budget is not being held back.
    const [roomy, other] = processes(2, 100, { windowMs: 1000, maxInFlightMs: 5000 }).gates as [
      RedisWeightGate,
      RedisWeightGate,
    ];
    other.pauseUntil(Date.now() + 300);
    await other.drain();
    const before = Date.now();
    const afterPause = await roomy.acquire({ ip: 1, uid: 1 });
    afterPause.settle();
    expect(Date.now() - before).toBeGreaterThanOrEqual(200); // it did sit the pause out
    expect(afterPause.heldBack).toBe(false);
  });

  it("keeps several processes together under both budgets in every sliding window", async () => {
    const windowMs = 250;
    const ip = { key: key("ip"), limit: 40 };
    const uid = { key: key("uid"), limit: 100 };
    const procs = [0, 1, 2].map(() => processGate({ ip, uid, windowMs, maxInFlightMs: 5000 }));
    const cost = { ip: 2, uid: 5 };
    const perProcess = 60;
    const grants: Grant[] = [];
    await Promise.all(procs.map((g, i) => hammer(g, `p${i}`, cost, perProcess, 8, grants)));

    const n = procs.length * perProcess;
    expect(grants).toHaveLength(n);
    expect(maxInAnyWindow(grants, windowMs, (g) => g.cost.ip)).toBeLessThanOrEqual(ip.limit);
    expect(maxInAnyWindow(grants, windowMs, (g) => g.cost.uid)).toBeLessThanOrEqual(uid.limit);

    // The rate reached is printed, not asserted: speed is a benchmark's figure (`npm run bench`,
    // budget efficiency), and on a busy machine a timed bound fails for reasons not in the gate.
    // 20 requests fit a window; after the first (free) burst, the best possible is 20 per window.
    const perWindow = Math.min(ip.limit / cost.ip, uid.limit / cost.uid);
    const times = grants.map((g) => g.at).sort((a, b) => a - b);
    const elapsed = times.at(-1)! - times[0]!;
    const rate = ((n - perWindow) / elapsed) * 1000;
    const theoretical = (perWindow / windowMs) * 1000;
    console.log(
      `3 processes, ${n} requests of ${cost.ip}/${cost.uid} under ${ip.limit}/${uid.limit} per ${windowMs} ms: ` +
        `${elapsed.toFixed(0)} ms, ${rate.toFixed(1)} req/s steady state = ${((rate / theoretical) * 100).toFixed(1)}% of ${theoretical} req/s`,
    );
    for (const g of procs) await g.drain();
    const used = await procs[0]!.usedNow();
    expect(used.ip).toBeLessThanOrEqual(ip.limit);
    expect(used.uid).toBeLessThanOrEqual(uid.limit);
  });

  it("limits each account by its own UID budget and all accounts together by the shared IP budget", async () => {
    const windowMs = 250;
    const ip = { key: key("ip"), limit: 40 }; // 20 requests of ip 2 per window, for everyone
    const uidA = { key: key("uid-a"), limit: 50 }; // 10 requests of uid 5 per window
    const uidB = { key: key("uid-b"), limit: 100 }; // 20 per window
    const a1 = processGate({ ip, uid: uidA, windowMs, maxInFlightMs: 5000 });
    const a2 = processGate({ ip, uid: uidA, windowMs, maxInFlightMs: 5000 });
    const b = processGate({ ip, uid: uidB, windowMs, maxInFlightMs: 5000 });
    const cost = { ip: 2, uid: 5 };
    const grants: Grant[] = [];
    await Promise.all([
      hammer(a1, "A", cost, 20, 6, grants),
      hammer(a2, "A", cost, 20, 6, grants),
      hammer(b, "B", cost, 40, 8, grants),
    ]);

    const of = (account: string) => grants.filter((g) => g.account === account);
    const maxA = maxInAnyWindow(of("A"), windowMs, (g) => g.cost.uid);
    const maxB = maxInAnyWindow(of("B"), windowMs, (g) => g.cost.uid);
    const maxIp = maxInAnyWindow(grants, windowMs, (g) => g.cost.ip);
    console.log(
      `two accounts: max per window uid A ${maxA}/${uidA.limit}, uid B ${maxB}/${uidB.limit}, ip ${maxIp}/${ip.limit}`,
    );
    expect(maxA).toBeLessThanOrEqual(uidA.limit);
    expect(maxB).toBeLessThanOrEqual(uidB.limit);
    expect(maxIp).toBeLessThanOrEqual(ip.limit);
    // Account A alone would be held to its UID budget: its 40 requests need at least 3 more windows.
    const timesA = of("A").map((g) => g.at);
    expect(Math.max(...timesA) - Math.min(...timesA)).toBeGreaterThanOrEqual(3 * windowMs);
  });

  it("counts a request in flight until it settles, then for one more window, without waiting for it to expire", async () => {
    const windowMs = 100;
    const ip = { key: key("ip"), limit: 1 };
    const uid = { key: key("uid"), limit: 1 };
    const p1 = processGate({ ip, uid, windowMs, maxInFlightMs: 5000 });
    const p2 = processGate({ ip, uid, windowMs, maxInFlightMs: 5000 });
    const first = await p1.acquire({ ip: 1, uid: 1 });
    let secondAt = 0;
    const second = p2.acquire({ ip: 1, uid: 1 }).then((p) => {
      secondAt = p.grantedAt;
      return p;
    });
    await new Promise((r) => setTimeout(r, 200)); // in flight for 200 ms
    const settledAt = Date.now();
    first.settle();
    (await second).settle();
    expect(secondAt).toBeGreaterThanOrEqual(settledAt + windowMs);
    expect(secondAt).toBeLessThan(settledAt + windowMs + 2500); // not the 5 s crash expiry
  });

  it("keeps a charge settled with mayStillArriveMs in flight that long, then one window, and its keys live as long", async () => {
    const windowMs = 100;
    const { ip, uid, gates } = processes(2, 1, { windowMs, maxInFlightMs: 200 });
    const [p1, p2] = gates as [RedisWeightGate, RedisWeightGate];
    const givenUp = await p1.acquire({ ip: 1, uid: 1 });
    const settledAt = Date.now();
    givenUp.settle(3000); // no answer: the request may still reach the exchange within 3 s
    await p1.drain();
    // The charge outlives the TTL set when it was made (window + maxInFlightMs + 1 s): so must the keys.
    for (const k of [ip.key, uid.key]) expect(await redis.client.pttl(k)).toBeGreaterThan(3000 + windowMs);
    const next = await p2.acquire({ ip: 1, uid: 1 });
    next.settle();
    expect(next.grantedAt).toBeGreaterThanOrEqual(settledAt + 3000 + windowMs);
  });

  it("lets the charge of a process that died before settle() expire after maxInFlightMs + windowMs", async () => {
    const windowMs = 100;
    const maxInFlightMs = 150;
    const ip = { key: key("ip"), limit: 1 };
    const uid = { key: key("uid"), limit: 1 };
    const crashed = processGate({ ip, uid, windowMs, maxInFlightMs });
    const survivor = processGate({ ip, uid, windowMs, maxInFlightMs });
    const orphan = await crashed.acquire({ ip: 1, uid: 1 }); // never settled
    const next = await survivor.acquire({ ip: 1, uid: 1 });
    next.settle();
    expect(next.grantedAt - orphan.grantedAt).toBeGreaterThanOrEqual(maxInFlightMs + windowMs);
    expect(next.grantedAt - orphan.grantedAt).toBeLessThan(maxInFlightMs + windowMs + 1500); // it does expire
    // Idle keys vanish on their own.
    const ttl = await redis.client.pttl(ip.key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(windowMs + maxInFlightMs + 1000);
  });

  it("holds back every process after pauseUntil() in one of them", async () => {
    const ip = { key: key("ip"), limit: 100 };
    const uid = { key: key("uid"), limit: 100 };
    const hit429 = processGate({ ip, uid, windowMs: 100, maxInFlightMs: 5000 });
    const other = processGate({ ip, uid, windowMs: 100, maxInFlightMs: 5000 });
    const t0 = Date.now();
    hit429.pauseUntil(t0 + 300);
    // The same process holds back at once, before its Redis write has even landed...
    const own = hit429.acquire({ ip: 1, uid: 1 });
    await hit429.drain();
    // ...and so does another process, through Redis.
    const permit = await other.acquire({ ip: 1, uid: 1 });
    permit.settle();
    (await own).settle();
    expect(permit.grantedAt).toBeGreaterThanOrEqual(t0 + 299); // PX is whole milliseconds
    expect(Date.now() - t0).toBeLessThan(300 + 1500); // the pause asked for, not more
    // A shorter pause never cuts a longer one short.
    const t1 = Date.now();
    other.pauseUntil(t1 + 300);
    hit429.pauseUntil(t1 + 50);
    await Promise.all([other.drain(), hit429.drain()]);
    expect(await redis.client.pttl(`${uid.key}:pause`)).toBeGreaterThan(200);
  });

  it("refuses a cost larger than the whole budget at once", async () => {
    const gate = processGate({
      ip: { key: key("ip"), limit: 40 },
      uid: { key: key("uid"), limit: 100 },
      windowMs: 100,
      maxInFlightMs: 1000,
    });
    await expect(gate.acquire({ ip: 41, uid: 1 })).rejects.toThrow(/exceeds the whole budget/);
    await expect(gate.acquire({ ip: 1, uid: 101 })).rejects.toThrow(/exceeds the whole budget/);
    // Refused outright: nothing was charged in Redis.
    expect(await gate.usedNow()).toEqual({ ip: 0, uid: 0 });
  });

  it("rejects a waiting acquire when its signal aborts, and leaves no charge behind", async () => {
    const ip = { key: key("ip"), limit: 2 };
    const uid = { key: key("uid"), limit: 2 };
    const gate = processGate({ ip, uid, windowMs: 1000, maxInFlightMs: 5000 });
    const held = await gate.acquire({ ip: 2, uid: 2 });
    const waiting = new AbortController();
    const queued = new AbortController();
    const t0 = performance.now();
    const first = gate.acquire({ ip: 1, uid: 1 }, waiting.signal); // sleeping on the budget
    const second = gate.acquire({ ip: 1, uid: 1 }, queued.signal); // queued behind it in this process
    setTimeout(() => queued.abort(new Error("queued gave up")), 30);
    setTimeout(() => waiting.abort(new Error("waiter gave up")), 60);
    await expect(second).rejects.toThrow("queued gave up");
    await expect(first).rejects.toThrow("waiter gave up");
    expect(performance.now() - t0).toBeLessThan(2500); // not the 5 s in-flight expiry of the held charge
    await expect(gate.acquire({ ip: 1, uid: 1 }, AbortSignal.abort(new Error("already")))).rejects.toThrow("already");
    expect(await gate.usedNow()).toEqual({ ip: 2, uid: 2 });
    held.settle();
  });

  it("reports the weight in use: used() from the last look, usedNow() from Redis", async () => {
    const ip = { key: key("ip"), limit: 40 };
    const uid = { key: key("uid"), limit: 100 };
    const p1 = processGate({ ip, uid, windowMs: 1000, maxInFlightMs: 5000 });
    const p2 = processGate({ ip, uid, windowMs: 1000, maxInFlightMs: 5000 });
    expect(p1.used()).toEqual({ ip: 0, uid: 0 });
    (await p1.acquire({ ip: 2, uid: 5 })).settle();
    expect(p1.used()).toEqual({ ip: 2, uid: 5 });
    (await p2.acquire({ ip: 1, uid: 1 })).settle();
    expect(p2.used()).toEqual({ ip: 3, uid: 6 });
    expect(await p1.usedNow()).toEqual({ ip: 3, uid: 6 });
    expect(p1.used()).toEqual({ ip: 3, uid: 6 });
  });

  it("keeps the weight in use as a running sum that matches the charges in the window: through expiry, hand-back and settle, and from charges written before the sum existed", async () => {
    const ip = { key: key("ip"), limit: 1e6 };
    const uid = { key: key("uid"), limit: 1e6 };
    // A window long enough that no charge expires between the steps that count them, however busy the machine.
    const windowMs = 1500;
    const gate = processGate({ ip, uid, windowMs, maxInFlightMs: 20_000 });
    const conn = clients.at(-1)!;
    /** The weight of the charges in the window, scanned from the sorted set itself. */
    const scanned = async (k: string) => {
      const t = await conn.time();
      const nowUs = Number(t[0]) * 1e6 + Number(t[1]);
      const members = await conn.zrangebyscore(k, nowUs - windowMs * 1000 + 1, "+inf");
      return members.reduce((sum, m) => sum + Number(m.split(":").at(-1)), 0);
    };
    const agree = async () => {
      const used = await gate.usedNow();
      expect(used).toEqual({ ip: await scanned(ip.key), uid: await scanned(uid.key) });
      return used;
    };
    // Charges of mixed weights, some settled at once, some held, some handed back unsent.
    const held = [];
    for (let i = 0; i < 30; i++) {
      const p = await gate.acquire({ ip: 1 + (i % 3), uid: 5 });
      if (i % 4 === 0) held.push(p);
      else p.settle();
    }
    const gaveUp = new AbortController();
    const late = gate.acquire({ ip: 7, uid: 7 }, gaveUp.signal);
    gaveUp.abort(new Error("gave up"));
    await expect(late).rejects.toThrow("gave up");
    await gate.drain();
    expect((await agree()).uid).toBe(150);
    // The settled ones leave after a window; the held ones (in flight) stay.
    await new Promise((r) => setTimeout(r, windowMs + 100));
    expect(await agree()).toEqual({ ip: held.reduce((s, _, j) => s + 1 + ((j * 4) % 3), 0), uid: held.length * 5 });
    for (const p of held) p.settle();
    await gate.drain();
    await new Promise((r) => setTimeout(r, windowMs + 100));
    expect(await agree()).toEqual({ ip: 0, uid: 0 });
    // Charges without a running sum (written by a version before it): counted once, then kept.
    for (let i = 0; i < 5; i++) (await gate.acquire({ ip: 2, uid: 2 })).settle();
    await gate.drain();
    await conn.del(`${ip.key}:sum`, `${uid.key}:sum`);
    expect(await agree()).toEqual({ ip: 10, uid: 10 });
    (await gate.acquire({ ip: 1, uid: 1 })).settle();
    expect(await agree()).toEqual({ ip: 11, uid: 11 });
    // The sum key lives as long as its sorted set.
    const [zsetTtl, sumTtl] = await Promise.all([conn.pttl(uid.key), conn.pttl(`${uid.key}:sum`)]);
    expect(sumTtl).toBeGreaterThan(0);
    expect(Math.abs(zsetTtl - sumTtl)).toBeLessThan(100);
  });

  it("puts back, when its request settles, a charge Redis forgot (a failover lost the write)", async () => {
    const ip = { key: key("ip"), limit: 10 };
    const uid = { key: key("uid"), limit: 10 };
    const gate = processGate({ ip, uid, windowMs: 5000, maxInFlightMs: 5000 });
    const kept = await gate.acquire({ ip: 2, uid: 2 });
    kept.settle();
    const inFlight = await gate.acquire({ ip: 3, uid: 3 });
    await gate.drain();
    expect(await gate.usedNow()).toEqual({ ip: 5, uid: 5 });
    // What a promoted replica lacks: the last charge (and so its weight in the running sums).
    const conn = clients[clients.length - 1]!;
    await conn.zrem(ip.key, (await conn.zrange(ip.key, -1, -1))[0]!);
    await conn.zrem(uid.key, (await conn.zrange(uid.key, -1, -1))[0]!);
    await conn.set(`${ip.key}:sum`, "2", "KEEPTTL");
    await conn.set(`${uid.key}:sum`, "2", "KEEPTTL");
    expect(await gate.usedNow()).toEqual({ ip: 2, uid: 2 });
    inFlight.settle();
    await gate.drain();
    expect(await gate.usedNow()).toEqual({ ip: 5, uid: 5 });
    // And with the sums gone too, the next check counts the set again.
    await conn.del(`${ip.key}:sum`, `${uid.key}:sum`);
    expect(await gate.usedNow()).toEqual({ ip: 5, uid: 5 });
  });

  it("charges nothing for a window after its connection to Redis was lost and made again", async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    clients.push(client);
    let told = 0;
    const reconnections = new RedisReconnections(client, () => told++);
    const windowMs = 600;
    const gate = new RedisWeightGate({
      redis: client,
      ip: { key: key("ip"), limit: 100 },
      uid: { key: key("uid"), limit: 100 },
      windowMs,
      maxInFlightMs: 1000,
      reconnections,
    });
    gates.push(gate);
    const before = await gate.acquire({ ip: 1, uid: 1 });
    before.settle();
    expect(told).toBe(0);
    // The server drops the connection (as a failover or restart does); ioredis connects again.
    const id = Number(await client.client("ID"));
    const ready = new Promise<number>((r) => client.once("ready", () => r(Date.now())));
    const killer = new Redis(redis.url);
    await killer.client("KILL", "ID", String(id));
    await killer.quit();
    const readyAt = await ready;
    expect(told).toBe(1);
    const after = await gate.acquire({ ip: 1, uid: 1 });
    after.settle();
    // Redis TIME and Date.now() read the same machine's clock.
    expect(after.grantedAt).toBeGreaterThanOrEqual(readyAt + windowMs - 5);
    // Once the window passed, it charges at once again.
    const next = await gate.acquire({ ip: 1, uid: 1 });
    next.settle();
    expect(next.grantedAt - after.grantedAt).toBeLessThan(windowMs);
    reconnections.close();
  });

  it("propagates Redis errors from acquire() rather than letting the request through", async () => {
    const dead = new Redis({
      host: "127.0.0.1",
      port: 1,
      enableOfflineQueue: false,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    dead.on("error", () => undefined);
    const gate = new RedisWeightGate({
      redis: dead,
      ip: { key: key("ip"), limit: 10 },
      uid: { key: key("uid"), limit: 10 },
      windowMs: 100,
      maxInFlightMs: 1000,
    });
    await expect(gate.acquire({ ip: 1, uid: 1 })).rejects.toThrow();
    dead.disconnect();
  });
});
