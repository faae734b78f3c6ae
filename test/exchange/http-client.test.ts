// The exchange client against the sandbox over real HTTP: headers, errors, retries.
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { fetchBillsPage } from "../../src/exchange/bills-endpoint.ts";
import { ExchangeApiError, ExchangeUnavailableError } from "../../src/exchange/errors.ts";
import { ExchangeClient } from "../../src/exchange/http-client.ts";
import { SlidingWindowGate } from "../../src/exchange/weight-gate.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, startSandbox, type Sandbox, type SandboxOptions } from "../../src/sandbox/index.ts";

let sandbox: Sandbox | undefined;
let client: ExchangeClient | undefined;
afterEach(async () => {
  await client?.close();
  await sandbox?.close();
});

async function setup(options: SandboxOptions, maxAttempts = 3, gate = new SlidingWindowGate({ ip: 1e6, uid: 1e6, windowMs: 1000 })) {
  sandbox = await startSandbox({ billCount: 200, limits: null, ...options });
  client = new ExchangeClient({
    baseUrl: sandbox.url,
    credentials: DEFAULT_SANDBOX_CREDENTIALS,
    locale: "en-US",
    timeoutMs: 300,
    maxAttempts,
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
    // The first request meets a 429 with Retry-After: 1; a second one, asked during that pause,
    // waits at the gate for the pause alone (the budget is far from full).
    const { sandbox, client, query } = await setup({ faults: { rate: 1, kinds: ["429-retry-after"] } }, 2);
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

  it.each([["truncated"], ["wrong-content-type"], ["reset"], ["stall"]] as const)("treats a %s response as retryable and never uses its body", async (kind) => {
    const { sandbox, client, query } = await setup({ faults: { rate: 1, kinds: [kind] }, stallMs: 1000 }, 2);
    await expect(fetchBillsPage(client, query)).rejects.toThrow(ExchangeUnavailableError);
    expect(sandbox.stats().requests).toBe(2);
  });

  it("honours Retry-After on a 429 before the next attempt", async () => {
    const { sandbox, client, query } = await setup({ faults: { rate: 1, kinds: ["429-retry-after"] } }, 2);
    const started = Date.now();
    await expect(fetchBillsPage(client, query)).rejects.toThrow(/HTTP 429/);
    // The sandbox sends Retry-After: 1 (second); backoff alone would wait at most 50 ms here.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(sandbox.stats().requests).toBe(2);
  });
});
