// Request signature and timestamp check (spec part 5 + the exchange facts note).
// ACCESS-SIGN = Base64(HMAC-SHA256(secret, timestamp + METHOD + requestPath + ("?" + query if
// any) + body)), body being the raw request bytes as received. Implemented here with
// node:crypto on purpose, independently of src/exchange: the sandbox is a check of our client.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { SandboxCredentials } from "./types.ts";

export interface AuthError {
  code: string;
  msg: string;
}

export interface SignedRequest {
  method: string;
  path: string;
  /** Raw query string without "?", or "" when there is none. */
  query: string;
  body: Buffer;
  headers: IncomingHttpHeaders;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === "" ? undefined : s;
}

export function expectedSignature(
  secret: string,
  timestamp: string,
  r: Pick<SignedRequest, "method" | "path" | "query" | "body">,
): string {
  const prefix = timestamp + r.method.toUpperCase() + r.path + (r.query === "" ? "" : `?${r.query}`);
  return createHmac("sha256", secret).update(prefix, "utf8").update(r.body).digest("base64");
}

/** Returns null when the request is authentic; checks run in the exchange's error-code order. */
export function checkAuth(
  r: SignedRequest,
  creds: SandboxCredentials,
  toleranceMs: number,
  nowMs: number,
): AuthError | null {
  const key = header(r.headers, "access-key");
  const sign = header(r.headers, "access-sign");
  const ts = header(r.headers, "access-timestamp");
  const pass = header(r.headers, "access-passphrase");
  if (key === undefined) return { code: "40001", msg: "ACCESS-KEY header is required" };
  if (sign === undefined) return { code: "40002", msg: "ACCESS-SIGN header is required" };
  if (ts === undefined) return { code: "40003", msg: "ACCESS-TIMESTAMP header is required" };
  if (pass === undefined) return { code: "40011", msg: "ACCESS-PASSPHRASE header is required" };
  if (!/^\d{13}$/.test(ts)) return { code: "40005", msg: "Invalid ACCESS-TIMESTAMP" };
  if (key !== creds.apiKey) return { code: "40006", msg: "Invalid ACCESS-KEY" };
  if (Math.abs(nowMs - Number(ts)) > toleranceMs) return { code: "40008", msg: "Request timestamp expired" };
  if (pass !== creds.passphrase) return { code: "40012", msg: "apikey/password is incorrect" };
  const want = Buffer.from(expectedSignature(creds.apiSecret, ts, r));
  const got = Buffer.from(sign);
  if (want.length !== got.length || !timingSafeEqual(want, got))
    return { code: "40009", msg: "signature verification failed" };
  return null;
}
