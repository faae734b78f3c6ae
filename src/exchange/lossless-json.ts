// JSON parsing that never rounds: the exchange sends bill ids above 2^53 as bare numbers, which
// JSON.parse silently changes. Every number stays as its original text (LosslessNumber).
import { isLosslessNumber, LosslessNumber, parse } from "lossless-json";

export { isLosslessNumber, LosslessNumber };

export type JsonValue = string | boolean | null | LosslessNumber | JsonValue[] | { [key: string]: JsonValue };

/** Parses JSON text keeping every number exact; throws a SyntaxError on malformed text or duplicate keys with different values. */
export function parseLossless(text: string): JsonValue {
  return parse(text) as JsonValue;
}

/**
 * Converts a parsed value to plain JSON for storage (jsonb): a number stays a number only when a
 * JavaScript reader gets the same digits back; otherwise it becomes a string with its exact digits.
 */
export function toStorableJson(value: JsonValue): unknown {
  if (isLosslessNumber(value)) {
    const text = value.value;
    const n = Number(text);
    return Number.isFinite(n) && String(n) === text ? n : text;
  }
  if (Array.isArray(value)) return value.map(toStorableJson);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toStorableJson(v);
    return out;
  }
  return value;
}
