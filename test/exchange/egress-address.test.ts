// EGRESS_LOCAL_ADDRESS: every exchange connection of the process leaves from the configured local
// address. Clients built from the configuration (the one path every command and the worker use)
// and bound to 127.0.0.2 and 127.0.0.3 reach a sandbox listening on 127.0.0.1; the sandbox sees
// each request from its client's address, and counts each address's IP budget on its own.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { fetchAccount } from "../../src/exchange/account-endpoint.ts";
import { fetchBillsPage } from "../../src/exchange/bills-endpoint.ts";
import { exchangeClientFromConfig } from "../../src/exchange/client-from-config.ts";
import type { ExchangeClient } from "../../src/exchange/http-client.ts";
import { SlidingWindowGate } from "../../src/exchange/weight-gate.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";

/** Source addresses of the requests this process's HTTP servers (the sandbox) received. */
const seen: string[] = [];
const onRequest = (message: unknown) => {
  const { request } = message as { request: IncomingMessage };
  seen.push(request.socket.remoteAddress ?? "unknown");
};

let sandbox: Sandbox | undefined;
const clients: ExchangeClient[] = [];
afterEach(async () => {
  unsubscribe("http.server.request.start", onRequest);
  seen.length = 0;
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await sandbox?.close();
  sandbox = undefined;
});

/** A client as every command builds one: from the environment, through exchangeClientFromConfig. */
function clientFrom(env: Record<string, string>): ExchangeClient {
  const config = loadConfig({ EXCHANGE_BASE_URL: sandbox!.url, ...env });
  const client = exchangeClientFromConfig(config, {
    credentials: DEFAULT_SANDBOX_CREDENTIALS,
    // No budget on the client's side: the sandbox's own limiter is what is looked at.
    gate: new SlidingWindowGate({ ip: 1e9, uid: 1e9, windowMs: 1000 }),
    logger: pino({ level: "silent" }),
  });
  clients.push(client);
  return client;
}

const page = (client: ExchangeClient) =>
  fetchBillsPage(client, { startTime: Date.now() - 86_400_000, endTime: Date.now(), limit: 100 });

describe("EGRESS_LOCAL_ADDRESS", () => {
  it("sends every request from the configured local address", async () => {
    sandbox = await startSandbox({ seed: 3, billCount: 200, limits: null });
    expect(new URL(sandbox.url).hostname).toBe("127.0.0.1");
    subscribe("http.server.request.start", onRequest);
    const two = clientFrom({ EGRESS_LOCAL_ADDRESS: "127.0.0.2" });
    const three = clientFrom({ EGRESS_LOCAL_ADDRESS: "127.0.0.3" });
    const unset = clientFrom({});
    // Several at once, so that each client opens more than one connection.
    await Promise.all([page(two), page(two), page(two), fetchAccount(two, "2")]);
    expect(seen).toEqual(["127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.2"]);
    seen.length = 0;
    await Promise.all([page(three), page(three), fetchAccount(three, "2")]);
    expect(seen).toEqual(["127.0.0.3", "127.0.0.3", "127.0.0.3"]);
    seen.length = 0;
    // Unset: the system chooses, which for 127.0.0.1 is 127.0.0.1.
    await page(unset);
    expect(seen).toEqual(["127.0.0.1"]);
  });

  it("gives each address its own IP budget at the exchange", async () => {
    // Room for two bills requests (IP weight 2 each) per source address in the window.
    sandbox = await startSandbox({
      seed: 3,
      billCount: 200,
      limits: { ipWeight: 4, uidWeight: 1000, windowMs: 60_000 },
    });
    // A 429 fails the call at once instead of being waited out.
    const two = clientFrom({ EGRESS_LOCAL_ADDRESS: "127.0.0.2", EXCHANGE_MAX_WAIT_MS: "1" });
    const three = clientFrom({ EGRESS_LOCAL_ADDRESS: "127.0.0.3", EXCHANGE_MAX_WAIT_MS: "1" });
    await page(two);
    await page(two);
    // 127.0.0.2's budget is spent; 127.0.0.3's is untouched.
    await page(three);
    await page(three);
    await expect(page(two)).rejects.toThrow(/too many requests/);
    const stats = sandbox.stats();
    expect(stats.rateLimited).toBe(1);
    expect(stats.billsRequests).toBe(5);
    expect(stats.maxIpWeightInWindow).toBe(4);
  });

  it("is refused at start unless it is an IP address", () => {
    expect(() => loadConfig({ EGRESS_LOCAL_ADDRESS: "localhost" })).toThrow(/EGRESS_LOCAL_ADDRESS/);
  });
});
