// The exchange's public documents spell one record's fields in two cases (marginMode beside
// pending_deposit_amount). A record is read under the spec's snake_case names, each field
// accepted in either spelling; both given with different values is refused, naming the field.
import { stringify } from "lossless-json";
import { isLosslessNumber, type JsonValue } from "./lossless-json.ts";

export type JsonObject = { [key: string]: JsonValue };

/** snake_case -> camelCase: "pending_deposit_amount" -> "pendingDepositAmount". */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return v !== null && v !== undefined && typeof v === "object" && !Array.isArray(v) && !isLosslessNumber(v);
}

/** Equal as the exchange meant them: a number and a string of the same digits are one value. */
export function sameValue(a: JsonValue, b: JsonValue): boolean {
  const scalar = (v: JsonValue) => (typeof v === "string" ? v : isLosslessNumber(v) ? v.value : undefined);
  const [sa, sb] = [scalar(a), scalar(b)];
  if (sa !== undefined || sb !== undefined) return sa === sb;
  return stringify(a) === stringify(b);
}

/**
 * The value of field `name` in either spelling (undefined: neither given). A disagreement is
 * pushed to `issues` as "<path>.<name>: ..." and the field is then treated as not given.
 */
export function field(o: JsonObject, name: string, path: string, issues: string[]): JsonValue | undefined {
  const camel = camelCase(name);
  const snake = Object.hasOwn(o, name) ? o[name] : undefined;
  const other = camel !== name && Object.hasOwn(o, camel) ? o[camel] : undefined;
  if (snake !== undefined && other !== undefined && !sameValue(snake, other)) {
    issues.push(`${path}.${name}: given as both ${name} and ${camel} with different values`);
    return undefined;
  }
  return snake ?? other;
}

/** The record under snake_case names, only the fields of `names` that were given. */
export function pick(o: JsonObject, names: readonly string[], path: string, issues: string[]): JsonObject {
  const out: JsonObject = {};
  for (const n of names) {
    const v = field(o, n, path, issues);
    if (v !== undefined) out[n] = v;
  }
  return out;
}
