// Test-side HTTP client for the sandbox. The signature is computed here with node:crypto,
// independently of both the sandbox's and the project client's signing code.
import { createHmac } from "node:crypto";
import { request, type Dispatcher } from "undici";
import { parse } from "lossless-json";
import { DEFAULT_SANDBOX_CREDENTIALS, type Sandbox, type SandboxCredentials } from "../../src/sandbox/index.ts";

export const BILLS = "/capi/v2/account/bills";
export const ACCOUNT = "/capi/v2/account/account";
export const INCOME = "/capi/v3/account/income";

export function sign(secret: string, prehash: string): string {
  return createHmac("sha256", secret).update(prehash).digest("base64");
}

export interface CallOptions {
  method?: "GET" | "POST";
  path?: string;
  query?: string;
  body?: string;
  credentials?: SandboxCredentials;
  timestamp?: string;
  /** Header values to replace; `null` removes the header. */
  headers?: Record<string, string | null>;
  dispatcher?: Dispatcher;
}

export interface CallResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  ms: number;
}

export async function call(sb: Sandbox, o: CallOptions = {}): Promise<CallResult> {
  const method = o.method ?? "POST";
  const path = o.path ?? BILLS;
  const query = o.query ?? "";
  const body = o.body ?? (method === "POST" ? "{}" : "");
  const creds = o.credentials ?? DEFAULT_SANDBOX_CREDENTIALS;
  const ts = o.timestamp ?? String(Date.now());
  const headers: Record<string, string> = {
    "ACCESS-KEY": creds.apiKey,
    "ACCESS-SIGN": sign(creds.apiSecret, ts + method + path + (query ? `?${query}` : "") + body),
    "ACCESS-PASSPHRASE": creds.passphrase,
    "ACCESS-TIMESTAMP": ts,
    locale: "en-US",
    "Content-Type": "application/json",
  };
  for (const [k, v] of Object.entries(o.headers ?? {})) {
    if (v === null) delete headers[k];
    else headers[k] = v;
  }
  const started = performance.now();
  const res = await request(`${sb.url}${path}${query ? `?${query}` : ""}`, {
    method,
    headers,
    ...(method === "POST" ? { body } : {}),
    ...(o.dispatcher ? { dispatcher: o.dispatcher } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, ms: performance.now() - started };
}

/** Raw items of a bills page parsed losslessly: numbers stay LosslessNumber, keys as sent. */
export interface RawPage {
  hasNextPage: boolean;
  items: Record<string, unknown>[];
}

export async function billsPage(
  sb: Sandbox,
  query: Record<string, unknown>,
  o: CallOptions = {},
): Promise<RawPage & { text: string }> {
  const r = await call(sb, { ...o, body: JSON.stringify(query) });
  if (r.status !== 200) throw new Error(`bills request failed: ${r.status} ${r.text}`);
  return { ...(parse(r.text) as unknown as RawPage), text: r.text };
}

/** billId and time of a raw item as strings, whichever spelling and JSON type was used. */
export function idOf(item: Record<string, unknown>): string {
  return String(item.billId);
}
export function timeOf(item: Record<string, unknown>): number {
  return Number(String(item.ctime ?? item.cTime));
}

export const FIXED_START = Date.UTC(2026, 9, 1);
export const FIXED_END = FIXED_START + 30 * 86_400_000;
