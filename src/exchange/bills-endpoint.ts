// POST /capi/v2/account/bills (spec 4.1): one page of bill history for a time range and filters.
import { parseBillItem, parseItems, type Bill, type RejectedItem } from "./bill-item.ts";
import { MalformedResponseError } from "./errors.ts";
import type { ExchangeClient, ResponseInfo } from "./http-client.ts";
import { conflictingKeys, elementTexts, isLosslessNumber, type JsonValue } from "./lossless-json.ts";
import { ENDPOINT_WEIGHTS } from "./weights.ts";

export const BILLS_PATH = "/capi/v2/account/bills";
/** The spec's maximum page size. */
export const BILLS_MAX_LIMIT = 100;

export interface BillsQuery {
  /** Sent as-is; the stream decides how to allow for unknown bound inclusivity. */
  startTime: number;
  endTime: number;
  limit: number;
  coin?: string;
  symbol?: string;
  businessType?: string;
}

export interface BillsPage {
  /** Items in the response, valid or not (what decides whether the page was full). */
  itemCount: number;
  /** undefined when the exchange left the field out. */
  hasNextPage: boolean | undefined;
  bills: Bill[];
  rejected: RejectedItem[];
  /** businessType values outside the spec's list, seen on this page. */
  unknownBusinessTypes: string[];
}

export function fetchBillsPage(client: ExchangeClient, query: BillsQuery, signal?: AbortSignal): Promise<BillsPage> {
  const body: Record<string, string | number> = {
    startTime: query.startTime,
    endTime: query.endTime,
    limit: query.limit,
  };
  if (query.coin) body.coin = query.coin;
  if (query.symbol) body.symbol = query.symbol;
  if (query.businessType) body.businessType = query.businessType;
  return client.call({
    endpoint: "bills",
    method: "POST",
    path: BILLS_PATH,
    body,
    weight: ENDPOINT_WEIGHTS.bills,
    parse: parseBillsPage,
    signal,
  });
}

/**
 * The envelope must be right or nothing from the response is used (the request is retried):
 * an object with an `items` array and, if present, a boolean `hasNextPage`, none of them given
 * twice with different values. Individual items that fail validation are returned as rejected
 * (for quarantine, with their exact text) rather than failing the page.
 */
export function parseBillsPage(
  json: JsonValue,
  _text?: string,
  info: ResponseInfo = { invalidUtf8: false },
): BillsPage {
  if (json === null || typeof json !== "object" || Array.isArray(json) || isLosslessNumber(json)) {
    throw new MalformedResponseError("bills response is not a JSON object");
  }
  const o = json as { [key: string]: JsonValue };
  // Some deployments wrap payloads as {code, msg, data}; accept that shape too.
  const envelope =
    o.items === undefined && o.data && typeof o.data === "object" && !Array.isArray(o.data)
      ? (o.data as { [key: string]: JsonValue })
      : o;
  const read =
    envelope === o
      ? [[o, ["items", "hasNextPage"]] as const]
      : ([
          [o, ["items", "data"]],
          [envelope, ["items", "hasNextPage"]],
        ] as const);
  for (const [obj, keys] of read) {
    const repeated = conflictingKeys(obj).find((k) => (keys as readonly string[]).includes(k));
    if (repeated) throw new MalformedResponseError(`bills response gives \`${repeated}\` twice with different values`);
  }
  const items = envelope.items;
  if (!Array.isArray(items)) throw new MalformedResponseError("bills response has no `items` array");
  const hasNext = envelope.hasNextPage;
  if (hasNext !== undefined && hasNext !== null && typeof hasNext !== "boolean") {
    throw new MalformedResponseError("bills response `hasNextPage` is not a boolean");
  }
  const parsed = parseItems(items, elementTexts(items), (item, text) =>
    parseBillItem(
      item,
      text === undefined ? { invalidUtf8: info.invalidUtf8 } : { text, invalidUtf8: info.invalidUtf8 },
    ),
  );
  return { itemCount: items.length, hasNextPage: typeof hasNext === "boolean" ? hasNext : undefined, ...parsed };
}
