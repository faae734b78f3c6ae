// The exchange speaking: a body with its `code` (and no payload) is a refusal, whatever the HTTP
// status (gateways answer errors as HTTP 200 too). It is never read as a malformed page, and what
// to do with it follows from its code, not from a blind retry.

import { isLosslessNumber, type JsonValue } from "./lossless-json.ts";

export type RefusalKind =
  /** Too many requests: wait and ask again (the client's 429 path). */
  | "rate-limited"
  /** The exchange's own failure: ask again after a backoff, like a 5xx. */
  | "transient"
  /** Key, signature, passphrase, timestamp, IP or permission: no retry can fix it. */
  | "credentials"
  /** The time range asked is too old or too wide (-1170): the caller may narrow it. */
  | "time-range"
  /** Anything else: the request itself is refused; final, with the exchange's code and message. */
  | "refused";

export interface Refusal {
  code: string;
  msg: string;
  kind: RefusalKind;
  /** From a time-range refusal's message ("startTime must be within the last N days"), when it says. */
  historyDays?: number;
  /** From a time-range refusal's message ("Time range cannot exceed M days"), when it says. */
  maxSpanDays?: number;
}

/** Codes meaning success in a {code, msg, data} envelope. */
const SUCCESS = /^(0+|200|success)$/i;

/** The refusal a response body is, or undefined when it is not one (a payload, or a success envelope). */
export function refusalOf(json: JsonValue | undefined): Refusal | undefined {
  if (!json || typeof json !== "object" || Array.isArray(json) || isLosslessNumber(json)) return undefined;
  const o = json as { [key: string]: JsonValue };
  if (!("code" in o) || "items" in o || (o.data !== undefined && o.data !== null)) return undefined;
  const code = scalarText(o.code);
  if (code === "" || SUCCESS.test(code)) return undefined;
  return classifyRefusal(code, scalarText(o.msg ?? o.message ?? null));
}

export function classifyRefusal(code: string, msg: string): Refusal {
  const n = /^-?\d+$/.test(code) ? Number(code) : NaN;
  if (code === "429") return { code, msg, kind: "rate-limited" };
  if (n === 40015) return { code, msg, kind: "transient" };
  // 40001-40018: missing or wrong key/sign/timestamp/passphrase, no permission, frozen, IP (v2);
  // -1040..-1058: authentication and permission (v3 family).
  if ((n >= 40001 && n <= 40018) || (n <= -1040 && n >= -1058)) return { code, msg, kind: "credentials" };
  if (n === -1170) {
    const historyDays = daysIn(/within the last\s+([\d.]+)\s*days?/i, msg);
    const maxSpanDays = daysIn(/cannot exceed\s+([\d.]+)\s*days?/i, msg);
    return {
      code,
      msg,
      kind: "time-range",
      ...(historyDays !== undefined ? { historyDays } : {}),
      ...(maxSpanDays !== undefined ? { maxSpanDays } : {}),
    };
  }
  return { code, msg, kind: "refused" };
}

function daysIn(re: RegExp, msg: string): number | undefined {
  const m = re.exec(msg);
  const days = m ? Number(m[1]) : NaN;
  return Number.isFinite(days) && days > 0 ? days : undefined;
}

function scalarText(v: JsonValue | undefined): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "object" && !isLosslessNumber(v)) return JSON.stringify(v);
  return String(v).trim();
}
