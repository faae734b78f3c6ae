// @module-tag redis
// A worker's accounts share one pool of keep-alive connections to the exchange (issue 25: at 1,000
// accounts one Agent per account opened a connection per run, 11,394 for 14,075 requests), bound
// to EGRESS_LOCAL_ADDRESS when it is set. Real Redis (the budgets) and the sandbox over HTTP; the
// sandbox's side of each request is watched through node:http's diagnostics channel.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AccountConfig } from "../../src/config/accounts.ts";
import { loadConfig } from "../../src/config/index.ts";
import { fetchBillsPage } from "../../src/exchange/bills-endpoint.ts";
import { createAccountClients, type AccountClients } from "../../src/jobs/account-clients.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

/** Source address and port of each request the sandbox received: one port is one connection. */
const seen: { address: string; port: number }[] = [];
const onRequest = (message: unknown) => {
  const { request } = message as { request: IncomingMessage };
  seen.push({ address: request.socket.remoteAddress ?? "?", port: request.socket.remotePort ?? 0 });
};

let r: TestRedis;
let sandbox: Sandbox;
let clients: AccountClients | undefined;
beforeAll(async () => {
  r = await createTestRedis();
  sandbox = await startSandbox({ seed: 5, billCount: 50, limits: null });
});
afterEach(async () => {
  unsubscribe("http.server.request.start", onRequest);
  seen.length = 0;
  await clients?.close();
  clients = undefined;
});
afterAll(async () => {
  await sandbox.close();
  await r.cleanup();
});

const account = (name: string): AccountConfig => ({
  name,
  coinIds: ["2"],
  backfillFromMs: 0,
  credentials: DEFAULT_SANDBOX_CREDENTIALS,
  billsSource: "v2",
});

function open(env: Record<string, string> = {}): AccountClients {
  const config = loadConfig({ EXCHANGE_BASE_URL: sandbox.url, QUEUE_PREFIX: r.prefix, ...env });
  const names = ["a", "b", "c", "d"];
  clients = createAccountClients(
    config,
    names.map(account),
    r.client,
    pino({ level: "silent" }),
    createMetrics({ defaultMetrics: false }),
  );
  return clients;
}

/** One bills page per account, one account after another, as a worker's runs come. */
async function oneRunEach(c: AccountClients): Promise<void> {
  for (const rt of c.runtimes.values())
    await fetchBillsPage(rt.client, { startTime: Date.now() - 86_400_000, endTime: Date.now(), limit: 100 });
}

describe("the worker's exchange connections", () => {
  it("are shared by its accounts: runs one after another reuse one connection", async () => {
    const c = open();
    subscribe("http.server.request.start", onRequest);
    await oneRunEach(c);
    await oneRunEach(c);
    expect(seen).toHaveLength(8);
    expect(new Set(seen.map((s) => s.port)).size).toBe(1);
  });

  it("outlive an account that is removed, and leave from EGRESS_LOCAL_ADDRESS", async () => {
    const c = open({ EGRESS_LOCAL_ADDRESS: "127.0.0.2" });
    subscribe("http.server.request.start", onRequest);
    await oneRunEach(c);
    // Removing an account retires its client, not the connections the others use.
    c.update(["b", "c", "d"].map(account));
    await oneRunEach(c);
    expect(seen).toHaveLength(7);
    expect(new Set(seen.map((s) => s.address))).toEqual(new Set(["127.0.0.2"]));
    expect(new Set(seen.map((s) => s.port)).size).toBe(1);
  });
});
