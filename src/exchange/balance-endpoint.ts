// GET /capi/v3/account/balance: the balance of each asset, from public sources (not in the spec).
// A bare array [{asset, balance, availableBalance, frozen, unrealizePnl}], possibly wrapped as
// {code, msg, data}; decimals quoted or bare, kept exact. An exchange that does not serve the path
// gives a typed "not served" result for the caller to record (exchange-profiles.ts).
import { z } from "zod";
import { MalformedResponseError } from "./errors.ts";
import { field, isJsonObject, sameValue } from "./field-spelling.ts";
import type { ExchangeClient, ResponseInfo } from "./http-client.ts";
import { decimal, describeIssues } from "./lossless-fields.ts";
import { toStorable, type JsonValue } from "./lossless-json.ts";
import { isNotServed } from "./not-served.ts";
import { ENDPOINT_WEIGHTS } from "./weights.ts";

export const BALANCE_PATH = "/capi/v3/account/balance";

export interface AssetBalance {
  asset: string;
  /** Decimal text exactly as sent (NUMERIC's form). */
  balance: string;
  /** null: not sent. */
  availableBalance: string | null;
  frozen: string | null;
  unrealizedPnl: string | null;
}

export type BalanceFetch =
  | { ok: true; balances: AssetBalance[]; raw: unknown }
  /** notServed: the exchange answered 404 for the path (rawText holds its answer as the error gave it). */
  | { ok: false; reason: string; rawText: string; notServed?: true };

export async function fetchBalances(client: ExchangeClient, signal?: AbortSignal): Promise<BalanceFetch> {
  try {
    return await client.call({
      endpoint: "balance",
      method: "GET",
      path: BALANCE_PATH,
      weight: ENDPOINT_WEIGHTS.balance,
      parse: parseBalances,
      signal,
    });
  } catch (err) {
    if (!isNotServed(err)) throw err;
    return { ok: false, notServed: true, reason: `${BALANCE_PATH} is not served: ${err.message}`, rawText: "" };
  }
}

const optionalDecimal = decimal.nullable().optional();
const entry = z.object({
  asset: z.string().min(1, "is empty"),
  balance: decimal,
  availableBalance: optionalDecimal,
  frozen: optionalDecimal,
  unrealizedPnl: optionalDecimal,
});

/** A body that is neither an array nor a wrapped one is malformed (retried); bad entries refuse the whole. */
export function parseBalances(
  json: JsonValue,
  text: string,
  info: ResponseInfo = { invalidUtf8: false },
): BalanceFetch {
  const list = Array.isArray(json) ? json : isJsonObject(json) && Array.isArray(json.data) ? json.data : undefined;
  if (list === undefined) throw new MalformedResponseError("balance response is not an array of balances");
  if (info.invalidUtf8)
    return { ok: false, reason: "response is not valid UTF-8 (its bad bytes were replaced by U+FFFD)", rawText: text };
  const whole = toStorable(list, "balances");
  if (!whole.ok) return { ok: false, reason: whole.reason, rawText: text };
  const issues: string[] = [];
  const read = list.map((e, i) => {
    if (!isJsonObject(e)) return e;
    const path = `balances[${i}]`;
    // The exchange spells it unrealizePnl; the correct spelling is accepted too.
    const pnl = [field(e, "unrealizePnl", path, issues), field(e, "unrealizedPnl", path, issues)];
    if (pnl[0] !== undefined && pnl[1] !== undefined && !sameValue(pnl[0], pnl[1]))
      issues.push(`${path}.unrealizedPnl: given as both unrealizePnl and unrealizedPnl with different values`);
    return {
      asset: e.asset,
      balance: e.balance,
      availableBalance: e.availableBalance,
      frozen: e.frozen,
      unrealizedPnl: pnl[0] ?? pnl[1],
    };
  });
  if (issues.length > 0) return { ok: false, reason: issues.slice(0, 5).join("; "), rawText: text };
  const parsed = z.array(entry).safeParse(read);
  if (!parsed.success) return { ok: false, reason: describeIssues(parsed.error, "balances"), rawText: text };
  const seen = new Set<string>();
  for (const b of parsed.data) {
    if (seen.has(b.asset)) return { ok: false, reason: `balances: asset ${b.asset} appears twice`, rawText: text };
    seen.add(b.asset);
  }
  const balances = parsed.data.map((b) => ({
    asset: b.asset,
    balance: b.balance,
    availableBalance: b.availableBalance ?? null,
    frozen: b.frozen ?? null,
    unrealizedPnl: b.unrealizedPnl ?? null,
  }));
  return { ok: true, balances, raw: whole.json };
}
