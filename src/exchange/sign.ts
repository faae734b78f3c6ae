// ACCESS-SIGN as the exchange computes it: Base64(HMAC-SHA256(secret, prehash)), where the prehash
// is timestamp + METHOD + requestPath + ("?" + query, when there is one) + body. The body must be
// the exact bytes sent, so callers serialise once and pass the same string to sign and to send.
import { createHmac } from "node:crypto";

export interface SignInput {
  timestamp: string;
  method: string;
  requestPath: string;
  queryString: string;
  body: string;
}

export function prehash({ timestamp, method, requestPath, queryString, body }: SignInput): string {
  return `${timestamp}${method.toUpperCase()}${requestPath}${queryString ? `?${queryString}` : ""}${body}`;
}

export function sign(secret: string, input: SignInput): string {
  return createHmac("sha256", secret).update(prehash(input), "utf8").digest("base64");
}
