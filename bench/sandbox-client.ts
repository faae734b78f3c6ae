// The exchange client the benchmark items point at an in-process sandbox: no client-side budget
// (the sandbox's limits are off too), so what is measured is the sync, not the pacing.
import type { Logger } from "pino";
import { ExchangeClient } from "../src/exchange/http-client.ts";
import type { BackoffOptions } from "../src/exchange/retry-policy.ts";
import { SlidingWindowGate } from "../src/exchange/weight-gate.ts";
import { DEFAULT_SANDBOX_CREDENTIALS } from "../src/sandbox/index.ts";

export function unbudgetedSandboxClient(url: string, logger: Logger, backoff?: BackoffOptions): ExchangeClient {
  return new ExchangeClient({
    baseUrl: url,
    credentials: DEFAULT_SANDBOX_CREDENTIALS,
    locale: "en-US",
    timeoutMs: 10_000,
    maxAttempts: 3,
    ...(backoff ? { backoff } : {}),
    gate: new SlidingWindowGate({ ip: 1e9, uid: 1e9, windowMs: 1000 }),
    logger,
  });
}
