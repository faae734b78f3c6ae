// The environment that points ledger-sync at a sandbox: its URL and API key. For the demo, the
// benchmarks and tests, which all run the real CLI or worker against a sandbox.
import { DEFAULT_SANDBOX_CREDENTIALS, type SandboxCredentials } from "./types.ts";

/** EXCHANGE_API_KEY/SECRET/PASSPHRASE (and EXCHANGE_BASE_URL when a URL is given). */
export function sandboxExchangeEnv(
  url?: string,
  credentials: SandboxCredentials = DEFAULT_SANDBOX_CREDENTIALS,
): Record<string, string> {
  return {
    ...(url === undefined ? {} : { EXCHANGE_BASE_URL: url }),
    EXCHANGE_API_KEY: credentials.apiKey,
    EXCHANGE_API_SECRET: credentials.apiSecret,
    EXCHANGE_API_PASSPHRASE: credentials.passphrase,
  };
}
