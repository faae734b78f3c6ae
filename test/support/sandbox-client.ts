// A real exchange client on a sandbox: the default credentials, no client-side budget (sandboxes in
// tests run with limits off unless a test says otherwise), quiet logs.
import { pino } from "pino";
import { ExchangeClient } from "../../src/exchange/http-client.ts";
import { SlidingWindowGate, type WeightGate } from "../../src/exchange/weight-gate.ts";
import { DEFAULT_SANDBOX_CREDENTIALS, type Sandbox } from "../../src/sandbox/index.ts";

export interface SandboxClientOptions {
  timeoutMs?: number;
  maxAttempts?: number;
  budget?: { ip: number; uid: number; windowMs: number };
  /** A gate of the test's own (a RedisWeightGate, say) instead of an in-process one for `budget`. */
  gate?: WeightGate;
}

export function sandboxClient(sandbox: Pick<Sandbox, "url">, o: SandboxClientOptions = {}): ExchangeClient {
  return new ExchangeClient({
    baseUrl: sandbox.url,
    credentials: DEFAULT_SANDBOX_CREDENTIALS,
    locale: "en-US",
    timeoutMs: o.timeoutMs ?? 5000,
    maxAttempts: o.maxAttempts ?? 3,
    backoff: { baseMs: 20, maxMs: 500 },
    gate: o.gate ?? new SlidingWindowGate(o.budget ?? { ip: 1e9, uid: 1e9, windowMs: 1000 }),
    logger: pino({ level: "silent" }),
  });
}
