// GET /capi/v2/account/getAccount?coin=NAME: the form of the account read the exchange's public
// documents show (the seed's /capi/v2/account/account?coinId= is in none of them). It asks by coin
// NAME and answers {account, collateral, version: null}, fields in camelCase or snake_case, coins
// by name and cross margin by symbol. It is read into the seed form's records (account-record.ts),
// so both forms fill the same tables; what it does not carry stays null, never invented.
import { z } from "zod";
import {
  accountRecord,
  collateralRecord,
  feeSetting,
  leverageSetting,
  modeSetting,
  positionRecord,
  uniquePositions,
  type AccountSnapshotFetch,
} from "./account-record.ts";
import { MalformedResponseError } from "./errors.ts";
import { field, isJsonObject, pick, type JsonObject } from "./field-spelling.ts";
import type { ExchangeClient, ResponseInfo } from "./http-client.ts";
import { describeIssues, digits } from "./lossless-fields.ts";
import { isLosslessNumber, toStorable, type JsonValue } from "./lossless-json.ts";
import { ENDPOINT_WEIGHTS } from "./weights.ts";

export const PUBLIC_ACCOUNT_PATH = "/capi/v2/account/getAccount";

/** Coin id -> coin name (COIN_NAMES): the public form names coins, the tables key them by id. */
export type CoinNames = Readonly<Record<string, string>>;

export function fetchPublicAccount(
  client: ExchangeClient,
  coinName: string,
  coinNames: CoinNames,
  signal?: AbortSignal,
): Promise<AccountSnapshotFetch> {
  return client.call({
    endpoint: "account-public",
    method: "GET",
    path: PUBLIC_ACCOUNT_PATH,
    query: { coin: coinName },
    weight: ENDPOINT_WEIGHTS.accountPublic,
    parse: (json, text, info) => parsePublicAccountResponse(json, text, coinNames, info),
    signal,
  });
}

// crossSymbol is part of collateral_current's primary key (cross_symbol): indexable, may be empty.
const crossSymbol = z
  .string()
  .refine((t) => Buffer.byteLength(t, "utf8") <= 1024, "is longer than 1024 bytes (PostgreSQL cannot index it)");

const publicResponseSchema = z
  .object({
    account: accountRecord.nullable(),
    collateral: z.array(collateralRecord.extend({ cross_symbol: crossSymbol })),
    position: z.array(positionRecord).nullable(),
    version: z.union([z.string(), digits]).nullable(),
  })
  .superRefine((r, ctx) => uniquePositions(r.position, ctx));

const names = (schema: { shape: Record<string, unknown> }) => Object.keys(schema.shape);
const required = (schema: { shape: Record<string, z.ZodType> }) =>
  Object.entries(schema.shape)
    .filter(([, s]) => !s.safeParse(undefined).success)
    .map(([n]) => n);

const SETTINGS_MAPS = [
  ["contract_id_to_fee_setting", names(feeSetting)],
  ["contract_id_to_mode_setting", names(modeSetting)],
  ["contract_id_to_leverage_setting", names(leverageSetting)],
] as const;
const COLLATERAL_FIELDS = names(collateralRecord).filter((n) => n !== "coin_id" && n !== "cross_contract_id");

/**
 * Like parseAccountResponse: a body that is not a JSON object is a transport problem (retried);
 * content that fails validation is returned as rejected with the exact text. A record the form
 * carries only in part (an account without its id or settings, a position without its contract
 * id) is not stored: that is said in `unstored`, and the tables keep what they had.
 */
export function parsePublicAccountResponse(
  json: JsonValue,
  text: string,
  coinNames: CoinNames,
  info: ResponseInfo = { invalidUtf8: false },
): AccountSnapshotFetch & { unstored?: string[] } {
  if (!isJsonObject(json)) throw new MalformedResponseError("account response is not a JSON object");
  const o = json;
  // Some deployments wrap payloads as {code, msg, data}; accept that shape too.
  const body = o.collateral === undefined && o.account === undefined && isJsonObject(o.data) ? o.data : o;
  if (info.invalidUtf8)
    return { ok: false, reason: "response is not valid UTF-8 (its bad bytes were replaced by U+FFFD)", rawText: text };
  const whole = toStorable(o, "response");
  if (!whole.ok) return { ok: false, reason: whole.reason, rawText: text };

  const issues: string[] = [];
  const unstored: string[] = [];
  const coinIds = coinIdsByName(coinNames);
  const coinId = (r: JsonObject, path: string): JsonValue | undefined => {
    const id = field(r, "coin_id", path, issues);
    const name = field(r, "coin", path, issues);
    if (name === undefined || name === null) return id;
    const named = typeof name === "string" ? coinIds.get(name) : undefined;
    if (named === undefined || named === null) {
      issues.push(
        named === null
          ? `${path}.coin: COIN_NAMES gives the name ${scalar(name)} to more than one coin id`
          : `${path}.coin: ${JSON.stringify(scalar(name))} has no coin id in COIN_NAMES (e.g. 2=USDT)`,
      );
      return id;
    }
    if (id !== undefined && scalar(id) !== named)
      issues.push(`${path}.coin: ${scalar(name)} is coin id ${named} in COIN_NAMES, but coin_id says ${scalar(id)}`);
    return id ?? named;
  };

  const readCollateral = (c: JsonObject, path: string): JsonObject => {
    const out = pick(c, COLLATERAL_FIELDS, path, issues);
    const id = coinId(c, path);
    if (id !== undefined) out.coin_id = id;
    const cross = field(c, "cross_symbol", path, issues);
    out.cross_symbol = cross === null || cross === undefined ? "" : cross;
    // No contract id is invented for a symbol: it is the exchange's when it sends one, else 0.
    out.cross_contract_id = field(c, "cross_contract_id", path, issues) ?? "0";
    return out;
  };
  const collateral = Array.isArray(body.collateral)
    ? body.collateral.map((c, i) => (isJsonObject(c) ? readCollateral(c, `response.collateral[${i}]`) : c))
    : body.collateral;

  const account = readAccount(body.account, "response.account", issues, unstored);
  const position = readPositions(body.position ?? body.positions, coinId, issues, unstored);
  if (issues.length > 0) return { ok: false, reason: summarise(issues), rawText: text };
  const parsed = publicResponseSchema.safeParse({ account, collateral, position, version: body.version ?? null });
  if (!parsed.success) return { ok: false, reason: describeIssues(parsed.error, "response"), rawText: text };
  const raw = body === o ? whole.json : (whole.json as { data: unknown }).data;
  return { ok: true, response: parsed.data, raw, ...(unstored.length > 0 ? { unstored } : {}) };
}

/** The account record when the form carries all of it (settings maps included), else null. */
function readAccount(v: JsonValue | undefined, path: string, issues: string[], unstored: string[]): JsonValue {
  if (v === undefined || v === null) return null;
  if (!isJsonObject(v)) return v; // refused by the schema, naming the path
  const out = pick(v, names(accountRecord), path, issues);
  const fee = out.default_fee_setting;
  if (isJsonObject(fee)) out.default_fee_setting = pick(fee, names(feeSetting), `${path}.default_fee_setting`, issues);
  for (const [map, fields] of SETTINGS_MAPS) {
    const m = out[map];
    if (!isJsonObject(m)) continue;
    out[map] = Object.fromEntries(
      Object.entries(m).map(([k, e]) => [k, isJsonObject(e) ? pick(e, fields, `${path}.${map}.${k}`, issues) : e]),
    );
  }
  const missing = required(accountRecord).filter((n) => out[n] === undefined);
  if (missing.length > 0) {
    unstored.push(`the account record (it lacks ${list(missing)})`);
    return null;
  }
  // Settings keyed otherwise than by contract id (by symbol, say) have no contract to be stored under.
  const keyed = SETTINGS_MAPS.find(([map]) => isJsonObject(out[map]) && Object.keys(out[map]).some(notDigits));
  if (keyed !== undefined) {
    unstored.push(`the account record (its ${keyed[0]} is not keyed by contract id)`);
    return null;
  }
  return out;
}

/** The positions when the form sends them complete; null (positions left as they are) otherwise. */
function readPositions(
  v: JsonValue | undefined,
  coinId: (r: JsonObject, path: string) => JsonValue | undefined,
  issues: string[],
  unstored: string[],
): JsonValue {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) return v;
  const fields = names(positionRecord).filter((n) => n !== "coin_id");
  const out = v.map((p, i) => {
    if (!isJsonObject(p)) return p;
    const path = `response.position[${i}]`;
    const r = pick(p, fields, path, issues);
    const id = coinId(p, path);
    if (id !== undefined) r.coin_id = id;
    return r;
  });
  const missing = new Set<string>();
  for (const p of out) if (isJsonObject(p)) for (const n of required(positionRecord)) if (!(n in p)) missing.add(n);
  if (missing.size === 0) return out;
  unstored.push(`the positions (they lack ${list([...missing])})`);
  return null;
}

/** Coin name -> coin id; null for a name given to two ids (it cannot be read back: refused when used). */
function coinIdsByName(coinNames: CoinNames): Map<string, string | null> {
  const ids = new Map<string, string | null>();
  for (const [id, name] of Object.entries(coinNames)) ids.set(name, ids.has(name) && ids.get(name) !== id ? null : id);
  return ids;
}

const notDigits = (key: string) => !/^[0-9]{1,78}$/.test(key);
const list = (fields: string[]) => fields.slice(0, 5).join(", ") + (fields.length > 5 ? ", ..." : "");

function scalar(v: JsonValue): string {
  return typeof v === "string" ? v : isLosslessNumber(v) ? v.value : JSON.stringify(v);
}

function summarise(issues: string[]): string {
  return issues.slice(0, 5).join("; ") + (issues.length > 5 ? `; and ${issues.length - 5} more` : "");
}
