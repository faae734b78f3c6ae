// One bill entry (spec 2.1), validated once where it enters. Tolerant where the spec says so
// (billId and cTime as string or number, `cTime` or `ctime`, unknown extra fields), strict where
// it matters: ids are digits, amounts are decimals, the time is a real instant.
import { stringify } from "lossless-json";
import { isKnownBusinessType } from "./business-types.ts";
import { toDecimalText } from "./decimal-text.ts";
import { isLosslessNumber, sourceText, toStorable, type JsonValue } from "./lossless-json.ts";

// Read-only: a bill is what the exchange sent, parsed once where it enters.
export interface Bill {
  /** Decimal digits exactly as sent. */
  readonly billId: string;
  readonly coin: string;
  /** The contract; null when the bill belongs to none (a deposit, withdrawal or transfer): the
   *  exchange sends null, leaves it out or sends "", and all three are stored as SQL NULL. */
  readonly symbol: string | null;
  readonly businessType: string;
  readonly amount: string;
  readonly balance: string;
  readonly fillFee: string;
  /** Creation time, epoch milliseconds (always a safe integer). */
  readonly cTimeMs: number;
  /**
   * Why a transfer was made, when the exchange says (not in the spec; public sources show it); null
   * or absent otherwise.
   */
  readonly transferReason?: string | null;
  /** The item as received, numbers a JavaScript reader could not hold exactly turned into strings. */
  readonly raw: unknown;
  /** The item's exact text, when known (what is quarantined if the bill turns out unusable). */
  readonly rawText?: string;
}

export interface RejectedItem {
  /** The item's text exactly as received (after UTF-8 decoding). */
  rawText: string;
  reason: string;
  /** Known when the time parsed even though something else did not. */
  cTimeMs?: number;
}

export type ItemResult = { ok: true; bill: Bill; unknownBusinessType: boolean } | { ok: false; rejected: RejectedItem };

// Latest instant a JavaScript Date can represent; anything later is not a millisecond timestamp.
const MAX_DATE_MS = 8_640_000_000_000_000;

/**
 * coin, symbol and businessType are indexed (bills_account_coin_type_created_at_idx, ...), and a
 * PostgreSQL btree entry holds at most 2704 bytes: longer values would fail the whole window's write.
 */
export const MAX_TEXT_BYTES = 1024;

export interface ItemSource {
  /** The item's exact text (from the response); default: as parsed, else re-serialised. */
  text?: string;
  /** The response was not valid UTF-8: its bad bytes became U+FFFD in the text. */
  invalidUtf8?: boolean;
}

export function parseBillItem(item: JsonValue, source: ItemSource = {}): ItemResult {
  const rawText = source.text ?? sourceText(item) ?? stringify(item) ?? "null";
  const isObject = item !== null && typeof item === "object" && !Array.isArray(item) && !isLosslessNumber(item);
  const time = isObject ? readTime(item as { [key: string]: JsonValue }) : undefined;
  const knownTime = typeof time === "number" ? time : undefined;
  const reject = (reason: string, cTimeMs = knownTime): ItemResult => ({
    ok: false,
    rejected: { rawText, reason, ...(cTimeMs === undefined ? {} : { cTimeMs }) },
  });
  // A replaced byte could be anywhere in the item: nothing of it can be trusted.
  if (source.invalidUtf8 && rawText.includes("\ufffd"))
    return reject("the response is not valid UTF-8: this item holds bytes that were replaced by U+FFFD");
  if (!isObject) return reject("item is not an object");
  const o = item as { [key: string]: JsonValue };
  const storable = toStorable(o, "item");
  if (!storable.ok) return reject(storable.reason);
  if (typeof time !== "number") return reject(time ?? "item has no creation time");

  const billId = readDigits(o.billId);
  if (billId === undefined) return reject(`billId ${describe(o.billId)} is not a non-negative integer`, time);

  const fields: Record<(typeof TEXT_FIELDS)[number], string> = { coin: "", symbol: "", businessType: "" };
  for (const key of TEXT_FIELDS) {
    const v = o[key];
    // No contract: the exchange sends a null symbol, leaves it out or sends "" (all three become null below).
    if (key === "symbol" && (v === null || v === undefined)) continue;
    if (typeof v !== "string") return reject(`${key} ${describe(v)} is not a string`, time);
    fields[key] = v;
  }
  if (fields.coin === "") return reject("coin is empty", time);
  if (fields.businessType === "") return reject("businessType is empty", time);
  for (const key of TEXT_FIELDS) {
    // A UTF-16 unit is at most 3 UTF-8 bytes: short text needs no byte count.
    const text = fields[key];
    if (text.length * 3 > MAX_TEXT_BYTES && Buffer.byteLength(text, "utf8") > MAX_TEXT_BYTES)
      return reject(`${key} is longer than ${MAX_TEXT_BYTES} bytes (PostgreSQL cannot index it)`, time);
  }

  const decimals: Record<(typeof DECIMAL_FIELDS)[number], string> = { amount: "", balance: "", fillFee: "" };
  for (const key of DECIMAL_FIELDS) {
    const v = o[key];
    const text = typeof v === "string" ? v : isLosslessNumber(v) ? v.value : undefined;
    if (text === undefined) return reject(`${key} ${describe(v)} is not a decimal`, time);
    const parsed = toDecimalText(text);
    if (!parsed.ok) return reject(`${key} "${truncate(text)}" ${parsed.error}`, time);
    decimals[key] = parsed.text;
  }

  const transferReason = o.transferReason;
  if (transferReason !== undefined && transferReason !== null && typeof transferReason !== "string") {
    return reject(`transferReason ${describe(transferReason)} is not a string`, time);
  }
  if (
    typeof transferReason === "string" &&
    transferReason.length * 3 > MAX_TEXT_BYTES &&
    Buffer.byteLength(transferReason, "utf8") > MAX_TEXT_BYTES
  ) {
    return reject(`transferReason is longer than ${MAX_TEXT_BYTES} bytes`, time);
  }

  return {
    ok: true,
    unknownBusinessType: !isKnownBusinessType(fields.businessType),
    bill: {
      billId,
      coin: fields.coin,
      // One form for "no contract", whichever way it was sent: SQL NULL in bills.symbol.
      symbol: fields.symbol === "" ? null : fields.symbol,
      businessType: fields.businessType,
      amount: decimals.amount,
      balance: decimals.balance,
      fillFee: decimals.fillFee,
      cTimeMs: time,
      transferReason: transferReason ?? null,
      raw: storable.json,
      rawText,
    },
  };
}

const TEXT_FIELDS = ["coin", "symbol", "businessType"] as const;
const DECIMAL_FIELDS = ["amount", "balance", "fillFee"] as const;
const TIME_FIELDS = ["cTime", "ctime"] as const;

/** The creation time from `cTime` (documented) or `ctime` (sample); both present must agree. */
function readTime(o: { [key: string]: JsonValue }): number | string {
  const present = TIME_FIELDS.filter((k) => o[k] !== undefined);
  if (present.length === 0) return "neither cTime nor ctime is present";
  const values = present.map((k) => readDigits(o[k]));
  const first = values[0];
  if (first === undefined) return `${present[0]} ${describe(o[present[0]!])} is not a millisecond timestamp`;
  if (values.length === 2 && values[1] !== first)
    return `cTime and ctime disagree (${describe(o.cTime)} vs ${describe(o.ctime)})`;
  const ms = Number(first);
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms > MAX_DATE_MS)
    return `creation time ${first} is not a valid epoch-millisecond instant`;
  return ms;
}

/** Digits of a non-negative integer given as a string or a JSON number; undefined otherwise. */
function readDigits(v: JsonValue | undefined): string | undefined {
  const text = typeof v === "string" ? v : isLosslessNumber(v) ? v.value : undefined;
  return text !== undefined && /^[0-9]{1,78}$/.test(text) ? text : undefined;
}

function describe(v: JsonValue | undefined): string {
  if (v === undefined) return "(missing)";
  if (isLosslessNumber(v)) return truncate(v.value);
  return truncate(stringify(v) ?? String(v));
}

function truncate(text: string): string {
  const chars = [...text]; // whole characters: never half a surrogate pair
  return chars.length > 60 ? `${chars.slice(0, 60).join("")}…` : text;
}

/**
 * A page's items, each parsed by `parse` (given its exact text): the bills, the rejected, and the
 * unknown types seen.
 */
export function parseItems(
  items: JsonValue[],
  texts: string[] | undefined,
  parse: (item: JsonValue, text: string | undefined) => ItemResult,
): { bills: Bill[]; rejected: RejectedItem[]; unknownBusinessTypes: string[] } {
  const bills: Bill[] = [];
  const rejected: RejectedItem[] = [];
  const unknown = new Set<string>();
  for (let i = 0; i < items.length; i++) {
    const r = parse(items[i]!, texts?.[i]);
    if (r.ok) {
      bills.push(r.bill);
      if (r.unknownBusinessType) unknown.add(r.bill.businessType);
    } else {
      rejected.push(r.rejected);
    }
  }
  return { bills, rejected, unknownBusinessTypes: [...unknown] };
}
