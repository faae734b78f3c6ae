// POST /capi/v3/account/income: the exchange's newer ledger endpoint, paged by a cursor. Not in
// the spec; public sources describe it (issue 16), so everything here is tolerant where they
// disagree: ids and times as strings or numbers, `symbol` null, the payload bare or wrapped.
// Items become the same Bill as v2's (asset→coin, income→amount, incomeType→businessType,
// time→cTime), validated by the same rules; the raw item is kept as received.
import { LosslessNumber, stringify } from "lossless-json";
import { parseBillItem, parseItems, type Bill, type ItemResult, type RejectedItem } from "./bill-item.ts";
import { MalformedResponseError } from "./errors.ts";
import type { ExchangeClient, ResponseInfo } from "./http-client.ts";
import {
  conflictingKeys,
  elementTexts,
  isLosslessNumber,
  sourceText,
  toStorable,
  type JsonValue,
} from "./lossless-json.ts";
import { ENDPOINT_WEIGHTS } from "./weights.ts";

export const INCOME_PATH = "/capi/v3/account/income";
/** Largest `limit` the endpoint accepts (-1140 above). */
export const INCOME_MAX_LIMIT = 100;
/** Widest range the endpoint answers when both times are given (-1170 above). */
export const INCOME_MAX_SPAN_MS = 100 * 86_400_000;

/** Where the next page starts: the last item of the previous one, as the exchange named it. */
export interface IncomeCursor {
  /** Digits exactly as sent. */
  nextKeyId: string;
  /** Digits exactly as sent. */
  nextKeyTime: string;
}

export interface IncomeQuery {
  startTime: number;
  endTime: number;
  limit: number;
  nextKey?: IncomeCursor;
  asset?: string;
  symbol?: string;
  incomeType?: string;
}

export interface IncomePage {
  /** Items in the response, valid or not. */
  itemCount: number;
  hasNextPage: boolean;
  /** null on the last page. */
  nextKey: IncomeCursor | null;
  bills: Bill[];
  rejected: RejectedItem[];
  /** incomeType values outside the spec's businessType list, seen on this page. */
  unknownBusinessTypes: string[];
}

export function fetchIncomePage(client: ExchangeClient, query: IncomeQuery, signal?: AbortSignal): Promise<IncomePage> {
  return client.call({
    endpoint: "income",
    method: "POST",
    path: INCOME_PATH,
    bodyText: incomeRequestBody(query),
    weight: ENDPOINT_WEIGHTS.income,
    parse: parseIncomePage,
    signal,
  });
}

/**
 * The request body. The cursor goes back as bare JSON numbers, digit for digit (the exchange's
 * definitions give them as longs; ids exceed 2^53, which JSON.stringify of a number would round).
 */
export function incomeRequestBody(q: IncomeQuery): string {
  const body: Record<string, string | number | LosslessNumber> = {
    startTime: q.startTime,
    endTime: q.endTime,
    limit: q.limit,
  };
  if (q.asset) body.asset = q.asset;
  if (q.symbol) body.symbol = q.symbol;
  if (q.incomeType) body.incomeType = q.incomeType;
  if (q.nextKey) {
    body.nextKeyId = new LosslessNumber(q.nextKey.nextKeyId);
    body.nextKeyTime = new LosslessNumber(q.nextKey.nextKeyTime);
  }
  return stringify(body) ?? "{}";
}

/**
 * The envelope must be right or nothing of the page is used (the request is retried): an object
 * with an `items` array, a boolean `hasNextPage`, and a `nextKey` that is an object of two
 * integers, or null only on the last page. Items that fail validation are rejected one by one
 * (for quarantine), as on v2.
 */
export function parseIncomePage(
  json: JsonValue,
  _text?: string,
  info: ResponseInfo = { invalidUtf8: false },
): IncomePage {
  if (json === null || typeof json !== "object" || Array.isArray(json) || isLosslessNumber(json)) {
    throw new MalformedResponseError("income response is not a JSON object");
  }
  const o = json as { [key: string]: JsonValue };
  const wrapped =
    o.items === undefined &&
    o.data !== null &&
    typeof o.data === "object" &&
    !Array.isArray(o.data) &&
    !isLosslessNumber(o.data);
  const envelope = wrapped ? (o.data as { [key: string]: JsonValue }) : o;
  const repeated = conflictingKeys(envelope).find((k) => ["items", "hasNextPage", "nextKey"].includes(k));
  if (repeated) throw new MalformedResponseError(`income response gives \`${repeated}\` twice with different values`);
  const items = envelope.items;
  if (!Array.isArray(items)) throw new MalformedResponseError("income response has no `items` array");
  if (typeof envelope.hasNextPage !== "boolean")
    throw new MalformedResponseError("income response `hasNextPage` is not a boolean");
  const nextKey = readCursor(envelope.nextKey);
  if (nextKey === undefined)
    throw new MalformedResponseError(
      `income response \`nextKey\` ${describe(envelope.nextKey)} is not {nextKeyId, nextKeyTime} or null`,
    );
  if (envelope.hasNextPage && nextKey === null)
    throw new MalformedResponseError("income response says hasNextPage but gives no nextKey");

  const parsed = parseItems(items, elementTexts(items), (item, text) => parseIncomeItem(item, text, info.invalidUtf8));
  return { itemCount: items.length, hasNextPage: envelope.hasNextPage, nextKey, ...parsed };
}

/** One v3 item, read under v2's names by v2's rules, then given its own raw form and transferReason. */
export function parseIncomeItem(item: JsonValue, text: string | undefined, invalidUtf8 = false): ItemResult {
  const rawText = text ?? sourceText(item) ?? stringify(item) ?? "null";
  if (item === null || typeof item !== "object" || Array.isArray(item) || isLosslessNumber(item)) {
    return { ok: false, rejected: { rawText, reason: "item is not an object" } };
  }
  const o = item as { [key: string]: JsonValue };
  const asV2: { [key: string]: JsonValue } = {};
  // A null or absent symbol (a transfer has no contract) goes on as it came: parseBillItem reads
  // both, and "", as no contract.
  for (const [from, to] of RENAMES) if (o[from] !== undefined) asV2[to] = o[from];
  const r: ItemResult = parseBillItem(asV2, { text: rawText, invalidUtf8 });
  if (!r.ok) return r;
  const storable = toStorable(o, "item");
  if (!storable.ok) return { ok: false, rejected: { rawText, reason: storable.reason, cTimeMs: r.bill.cTimeMs } };
  return { ok: true, unknownBusinessType: r.unknownBusinessType, bill: { ...r.bill, raw: storable.json } };
}

/** v3 name → the v2 name parseBillItem reads. */
const RENAMES: ReadonlyArray<readonly [string, string]> = [
  ["billId", "billId"],
  ["asset", "coin"],
  ["symbol", "symbol"],
  ["incomeType", "businessType"],
  ["income", "amount"],
  ["balance", "balance"],
  ["fillFee", "fillFee"],
  ["time", "cTime"],
  ["transferReason", "transferReason"],
];

/** The cursor, null, or undefined when it is neither. */
function readCursor(v: JsonValue | undefined): IncomeCursor | null | undefined {
  if (v === null || v === undefined) return null;
  if (typeof v !== "object" || Array.isArray(v) || isLosslessNumber(v)) return undefined;
  const k = v as { [key: string]: JsonValue };
  const id = digitsOf(k.nextKeyId);
  const time = digitsOf(k.nextKeyTime);
  return id === undefined || time === undefined ? undefined : { nextKeyId: id, nextKeyTime: time };
}

function digitsOf(v: JsonValue | undefined): string | undefined {
  const text = typeof v === "string" ? v : isLosslessNumber(v) ? v.value : undefined;
  return text !== undefined && /^[0-9]{1,78}$/.test(text) ? text : undefined;
}

function describe(v: JsonValue | undefined): string {
  if (v === undefined) return "(missing)";
  const text = isLosslessNumber(v) ? v.value : (stringify(v) ?? String(v));
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
