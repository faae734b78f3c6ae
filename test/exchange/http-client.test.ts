// @module-tag redis
// The exchange client against the sandbox over real HTTP: headers, errors, retries.
import { randomUUID } from "node:crypto";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fetchBillsPage } from "../../src/exchange/bills-endpoint.ts";
import { ExchangeApiError, ExchangeRateLimitedError, ExchangeUnavailableError } from "../../src/exchange/errors.ts";
import { ExchangeClient } from "../../src/exchange/http-client.ts";
import { RedisWeightGate } from "../../src/exchange/redis-weight-gate.ts";
import { SlidingWindowGate, type WeightGate } from "../../src/exchange/weight-gate.ts";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  startSandbox,
  type Sandbox,
  type SandboxOptions,
} from "../../src/sandbox/index.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";
import { sandboxClient } from "../support/sandbox-client.ts";

let sandbox: Sandbox | undefined;
let client: ExchangeClient | undefined;
let relay: Relay | undefined;
afterEach(async () => {
  await client?.close();
  await relay?.close();
  await sandbox?.close();
  client = relay = sandbox = undefined;
});

let redis: TestRedis;
beforeAll(async () => {
  redis = await createTestRedis();
});
afterAll(async () => {
  await redis.cleanup();
});

interface Relay {
  url: string;
  /** Everything the next connection sends reaches the exchange this much later (a slow way there). */
  delayNext(ms: number): void;
  close(): Promise<void>;
}

/**
 * A TCP relay in front of the sandbox, standing for the network between a client and an exchange:
 * bytes a client has sent still arrive after the client has closed its connection.
 */
async function startRelay(target: string): Promise<Relay> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let nextDelay = 0;
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("error", () => undefined);
    s.on("close", () => sockets.delete(s));
  };
  const server = createServer((down) => {
    const delay = nextDelay;
    nextDelay = 0;
    const up = connect(Number(port), hostname);
    track(down);
    track(up);
    down.on("data", (chunk: Buffer) => {
      if (delay === 0) return void up.write(chunk);
      const t = setTimeout(() => {
        timers.delete(t);
        up.write(chunk);
      }, delay);
      timers.add(t);
    });
    // The answer goes back while the client is there; once it has gone, the exchange's answer ends the relay.
    up.on("data", (chunk: Buffer) => (down.destroyed ? up.destroy() : down.write(chunk)));
    up.on("close", () => down.destroy());
    down.on("close", () => {
      if (delay === 0) up.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    delayNext: (ms) => void (nextDelay = ms),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function setup(
  options: SandboxOptions,
  maxAttempts = 3,
  gate: WeightGate = new SlidingWindowGate({ ip: 1e6, uid: 1e6, windowMs: 1000 }),
  maxWaitMs?: number,
) {
  sandbox = await startSandbox({ billCount: 200, limits: null, ...options });
  client = new ExchangeClient({
    baseUrl: sandbox.url,
    credentials: DEFAULT_SANDBOX_CREDENTIALS,
    locale: "en-US",
    timeoutMs: 300,
    maxAttempts,
    ...(maxWaitMs === undefined ? {} : { maxWaitMs }),
    backoff: { baseMs: 10, maxMs: 50 },
    gate,
    logger: pino({ level: "silent" }),
  });
  const truth = sandbox.truth();
  return { sandbox, client, query: { startTime: truth[0]!.cTimeMs, endTime: truth.at(-1)!.cTimeMs, limit: 100 } };
}

describe("exchange client", () => {
  it("fetches a signed page with every bill id exact", async () => {
    const { sandbox, client, query } = await setup({});
    const page = await fetchBillsPage(client, query);
    expect(page.itemCount).toBe(100);
    const truthIds = new Set(sandbox.truth().map((b) => b.billId));
    for (const b of page.bills) expect(truthIds.has(b.billId)).toBe(true);
  });

  it("says when the weight budget, not the network, sets the pace", async () => {
    // Two bills requests fit in the budget's window; the third waits for the first to expire.
    const { client, query } = await setup({}, 3, new SlidingWindowGate({ ip: 4, uid: 10, windowMs: 300 }));
    await fetchBillsPage(client, query);
    await fetchBillsPage(client, query);
    expect(client.recentlyThrottled()).toBe(false);
    await fetchBillsPage(client, query);
    expect(client.recentlyThrottled()).toBe(true);
    expect(client.recentlyThrottled(0)).toBe(false);
  });

  it("does not count sitting out its own 429 pause as the budget setting the pace", async () => {
    // The first request meets a 429; a second one, asked during the pause that follows (the gate's
    // window, 1 s), waits at the gate for the pause alone (the budget is far from full).
    const { sandbox, client, query } = await setup({ faults: { rate: 1, kinds: ["429"] } }, 2);
    const first = fetchBillsPage(client, query);
    await new Promise((r) => setTimeout(r, 100));
    sandbox.setFaults({ rate: 0 });
    const started = Date.now();
    await fetchBillsPage(client, query);
    expect(Date.now() - started).toBeGreaterThanOrEqual(800); // it did wait for the pause
    await first;
    expect(client.recentlyThrottled()).toBe(false);
  });

  it("stops at once on an expired timestamp (40008) and says to check the clock", async () => {
    const { sandbox, client, query } = await setup({ timestampToleranceMs: -1 });
    const err = await fetchBillsPage(client, query).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExchangeApiError);
    expect((err as ExchangeApiError).code).toBe("40008");
    expect(String(err)).toMatch(/check this machine's clock/);
    expect(sandbox.stats().requests).toBe(1); // no retry
  });

  it("retries HTML 5xx pages, then fails loudly with the last reason", async () => {
    const { sandbox, client, query } = await setup({ faults: { rate: 1, kinds: ["502-html"] } }, 4);
    const err = await fetchBillsPage(client, query).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExchangeUnavailableError);
    expect(String(err)).toMatch(/gave up after 4 attempts; last failure: HTTP 502/);
    expect(sandbox.stats().requests).toBe(4);
  });

  it.each([["truncated"], ["wrong-content-type"], ["reset"], ["stall"]] as const)(
    "treats a %s response as retryable and never uses its body",
    async (kind) => {
      const { sandbox, client, query } = await setup({ faults: { rate: 1, kinds: [kind] }, stallMs: 1000 }, 2);
      await expect(fetchBillsPage(client, query)).rejects.toThrow(ExchangeUnavailableError);
      expect(sandbox.stats().requests).toBe(2);
    },
  );

  it("waits out 429s as back-pressure: not attempts, each pause at least the window or Retry-After", async () => {
    // Four 429s in a row with maxAttempts 2: each is waited out (here the gate's window, 300 ms, or
    // the sandbox's Retry-After of 1 s when longer), and the fifth attempt is answered.
    const gate = new SlidingWindowGate({ ip: 1e6, uid: 1e6, windowMs: 300 });
    const { sandbox, client, query } = await setup(
      { faults: { rate: 1, kinds: ["429", "429-retry-after"], order: "cycle" } },
      2,
      gate,
    );
    const started = Date.now();
    const page = fetchBillsPage(client, query);
    await waitFor(() => sandbox.stats().requests >= 4);
    sandbox.setFaults({ rate: 0 });
    expect((await page).itemCount).toBe(100);
    const stats = sandbox.stats();
    expect(stats.faultsByKind).toEqual({ "429": 2, "429-retry-after": 2 });
    expect(stats.requests).toBe(5);
    // Two pauses of the window (300 ms) and two of Retry-After (1 s).
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * 300 + 2 * 1000);
    // The first 429 cut the allowance of the UID budget (the larger share used); the others were
    // sent after that cut and cut it again, each to 85% of the weight in the window, down to the floor.
    expect(gate.allowance().uid).toBeLessThan(1e6);
    expect(gate.allowance().ip).toBe(1e6);
  });

  it("fails a request refused as too many for longer than maxWaitMs, naming EXCHANGE_MAX_WAIT_MS", async () => {
    const gate = new SlidingWindowGate({ ip: 1e6, uid: 1e6, windowMs: 200 });
    const { sandbox, client, query } = await setup({ faults: { rate: 1, kinds: ["429"] } }, 2, gate, 1000);
    const started = Date.now();
    const err = await fetchBillsPage(client, query).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExchangeRateLimitedError);
    expect(String(err)).toMatch(
      /refused the request as too many requests \d+ times over \d+ s, beyond EXCHANGE_MAX_WAIT_MS=1000/,
    );
    // 200 ms pauses within a 1 s bound: about five attempts, never more than the bound allows.
    const requests = sandbox.stats().requests;
    expect(requests).toBeGreaterThanOrEqual(4);
    expect(requests).toBeLessThanOrEqual(6);
    expect(Date.now() - started).toBeLessThan(1500);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("a request given up without an answer", () => {
  /**
   * A sandbox allowing one bills request (UID weight 5) per window, behind a relay that can hold a
   * request back; a client with the same budget in the given gate, that fails on a 429.
   */
  async function budgeted(kind: "in-process" | "Redis", windowMs: number, timeoutMs: number) {
    sandbox = await startSandbox({ billCount: 200, limits: { ipWeight: 1000, uidWeight: 5, windowMs } });
    relay = await startRelay(sandbox.url);
    const connection = new Redis(redis.url);
    const keys = `${redis.prefix}:${randomUUID()}`;
    const gate: WeightGate =
      kind === "in-process"
        ? new SlidingWindowGate({ ip: 1000, uid: 5, windowMs })
        : new RedisWeightGate({
            redis: connection,
            ip: { key: `${keys}:ip`, limit: 1000 },
            uid: { key: `${keys}:uid`, limit: 5 },
            windowMs,
            maxInFlightMs: timeoutMs,
          });
    client = sandboxClient({ url: relay.url }, { timeoutMs, maxAttempts: 1, gate });
    const truth = sandbox.truth();
    return {
      sandbox,
      relay,
      client,
      query: { startTime: truth[0]!.cTimeMs, endTime: truth.at(-1)!.cTimeMs, limit: 100 },
      done: async () => {
        if (gate instanceof RedisWeightGate) await gate.drain();
        connection.disconnect();
      },
    };
  }

  /** A request the relay holds `heldMs` on its way, called off by its caller after 50 ms (as the bills stream does with a window it re-plans). */
  async function callOff(b: Awaited<ReturnType<typeof budgeted>>, heldMs: number): Promise<void> {
    b.relay.delayNext(heldMs);
    const calledOff = new AbortController();
    setTimeout(() => calledOff.abort(), 50);
    await expect(fetchBillsPage(b.client, b.query, calledOff.signal)).rejects.toHaveProperty("name", "AbortError");
  }

  it.each(["in-process", "Redis"] as const)(
    "stays charged (%s gate) for as long as it may still reach the exchange, so the next request meets no 429",
    async (kind) => {
      const b = await budgeted(kind, 1000, 800);
      const { sandbox, client, query } = b;
      try {
        // The first request is 400 ms on its way when the caller calls it off. The exchange still
        // gets it, and counts it, about 350 ms after the client gave up.
        await callOff(b, 400);
        // The next one is sent as soon as the gate has room: had the first charge been settled at
        // the abort, that is ~350 ms before the exchange's window has room, and the answer a 429.
        const page = await fetchBillsPage(client, query);
        expect(page.itemCount).toBe(100);
        const stats = sandbox.stats();
        expect(stats.billsRequests).toBe(2); // the called-off request did reach the exchange
        expect(stats.rateLimited).toBe(0);
      } finally {
        await b.done();
      }
    },
  );

  it.each(["in-process", "Redis"] as const)(
    "called off on the wire but answered soon after: its charge leaves a window after the answer, not a request timeout after (%s gate)",
    async (kind) => {
      // A short window and a long request timeout, so that the two outcomes are far apart.
      const b = await budgeted(kind, 300, 5000);
      const { sandbox, client, query } = b;
      try {
        const started = performance.now();
        await callOff(b, 800);
        // The caller is answered at once: the request has not even reached the exchange yet.
        expect(sandbox.stats().billsRequests).toBe(0);
        // The next request waits for the first one's charge: a window after its answer (~1.1 s),
        // where an abandoned request would hold it a request timeout (5 s).
        const page = await fetchBillsPage(client, query);
        expect(page.itemCount).toBe(100);
        expect(performance.now() - started).toBeLessThan(3500);
        const stats = sandbox.stats();
        expect(stats.billsRequests).toBe(2);
        expect(stats.rateLimited).toBe(0);
      } finally {
        await b.done();
      }
    },
  );
});
