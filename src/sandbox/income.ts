// The v3 ledger endpoint, POST /capi/v3/account/income, over the same history as v2 (same bill
// ids, amounts, balances). As public sources describe it (issue 16): a JSON body whose fields are
// all optional (`asset`, `symbol`, `incomeType`, `startTime`, `endTime`, `limit`, and the cursor
// `nextKeyId` + `nextKeyTime`); range rules (at most 100 days, `startTime` alone up to now,
// `endTime` alone the 30 days before it); errors -1140, -1171 and -1170; and a response that is
// not wrapped in code/data: {hasNextPage, nextKey, items}. Pages follow (time, billId), newest
// first by default (switch `incomeOrdering`). See README "v3 ledger endpoint (income)".
import { DAY_MS, horizonMs, refusalMessage, REFUSAL_CODE, type Behaviours } from "./behaviours.ts";
import { encodingOf } from "./encode.ts";
import { incomeSymbolJson } from "./null-symbols.ts";
import { filterFields, integer, isAbsent, type FilterIndexes, type Parsed } from "./query.ts";
import { anyTypeIndex, type BillStore } from "./store.ts";

/** The widest range one request may ask for (both times given). */
export const INCOME_MAX_SPAN_MS = 100 * DAY_MS;
/** What `endTime` alone covers: the 30 days before it. */
export const INCOME_END_ALONE_MS = 30 * DAY_MS;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

export type IncomeOrdering = "desc" | "asc";
export const INCOME_ORDERINGS: readonly IncomeOrdering[] = ["desc", "asc"];

/** The last item of the previous page: paging resumes strictly after it. */
export interface IncomeCursor {
  id: bigint;
  time: number;
}

export interface IncomeQuery {
  asset: string | null;
  symbol: string | null;
  incomeType: string | null;
  startTime: number | null;
  endTime: number | null;
  limit: number;
  cursor: IncomeCursor | null;
}

export interface IncomeContext {
  store: BillStore;
  indexes: FilterIndexes;
  behaviours: Behaviours;
  ordering: IncomeOrdering;
  /** Bill ids not served (Sandbox.hideBill, everywhere or on v3). */
  hidden: ReadonlySet<bigint>;
}

export interface IncomeReply {
  status: number;
  body: string;
}

/** Inclusive time window [from, to] a request selects in (from may be -Infinity). */
interface Window {
  from: number;
  to: number;
}

function errorBody(status: number, code: string, msg: string): IncomeReply {
  return { status, body: JSON.stringify({ code, msg, requestTime: Date.now() }) };
}

/** Handles one request body at `nowMs`, in the order of the rules: validation (40009), the limit
 *  (-1140), start after end (-1171), the range refusals (-1170), the cursor (40009), the page. */
export function serveIncome(ctx: IncomeContext, raw: string, nowMs: number): IncomeReply {
  const parsed = parseIncomeQuery(raw, ctx.behaviours.extraTypes);
  if (!parsed.ok) return errorBody(400, "40009", parsed.msg);
  const q = parsed.value;
  const rejected = rejection(ctx.behaviours, q, nowMs);
  if (rejected !== null) return rejected;
  if (q.cursor !== null && !billExists(ctx.store, q.cursor)) return errorBody(400, "40009", "invalid nextKey");
  const size = pageSize(ctx.behaviours, q.limit);
  // One more than the page: whether it exists is hasNextPage.
  const positions = selectIncome(ctx, q, incomeWindow(ctx.behaviours, q, nowMs), size + 1);
  return { status: 200, body: encodeIncomePage(ctx.store, positions, size) };
}

// ---- validation ----

/** A bill id: digits (a string, or a bare number however large, see quoteBigIntegers). */
function billId(body: Record<string, unknown>, key: string): Parsed<bigint | null> {
  const v = body[key];
  if (isAbsent(v)) return { ok: true, value: null };
  const digits = typeof v === "number" && Number.isSafeInteger(v) ? String(v) : v;
  if (typeof digits !== "string" || !/^\d{1,20}$/.test(digits)) return { ok: false, msg: `${key} must be an integer` };
  return { ok: true, value: BigInt(digits) };
}

// A JSON string or number token. Strings are matched whole so that digits inside them are left
// alone; numbers follow the JSON grammar exactly, so invalid JSON stays invalid.
const JSON_TOKEN = /"(?:[^"\\]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** Integer literals beyond 2^53 become strings of their digits before JSON.parse: a client may
 *  send the cursor's id as a bare number (as we serve it), and JS numbers would round it. */
export function quoteBigIntegers(raw: string): string {
  return raw.replace(JSON_TOKEN, (t) =>
    t.startsWith('"') || /[.eE]/.test(t) || Number.isSafeInteger(Number(t)) ? t : `"${t}"`,
  );
}

function parseBody(raw: string): Parsed<Record<string, unknown>> {
  let body: unknown = {};
  if (raw.trim() !== "") {
    try {
      body = JSON.parse(quoteBigIntegers(raw));
    } catch {
      return { ok: false, msg: "request body is not valid JSON" };
    }
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    return { ok: false, msg: "request body must be a JSON object" };
  return { ok: true, value: body as Record<string, unknown> };
}

/** The cursor: both halves or neither (one alone is malformed, 40009). */
function cursor(body: Record<string, unknown>): Parsed<IncomeCursor | null> {
  const id = billId(body, "nextKeyId");
  if (!id.ok) return id;
  const time = integer(body, "nextKeyTime");
  if (!time.ok) return time;
  if ((id.value === null) !== (time.value === null))
    return { ok: false, msg: "nextKeyId and nextKeyTime must be given together" };
  return { ok: true, value: id.value === null ? null : { id: id.value, time: time.value as number } };
}

/** Validates the body (the 40009 rule): field types as v2, incomeType among v2's businessType
 *  values (plus the sandbox's unknown types when switched on). The limit's range is not checked
 *  here: out of range is its own error, -1140. */
export function parseIncomeQuery(raw: string, extraTypes: readonly string[] = []): Parsed<IncomeQuery> {
  const body = parseBody(raw);
  if (!body.ok) return body;
  const b = body.value;
  const fields = filterFields(b, { coin: "asset", type: "incomeType" }, extraTypes);
  if (!fields.ok) return fields;
  const { coin: asset, symbol, type: incomeType, startTime, endTime, limit } = fields.value;
  const next = cursor(b);
  if (!next.ok) return next;
  return {
    ok: true,
    value: {
      asset,
      symbol,
      incomeType,
      startTime,
      endTime,
      limit: limit ?? DEFAULT_LIMIT,
      cursor: next.value,
    },
  };
}

// ---- range rules ----

/** The widest span allowed: 100 days, or maxSpanMs when that switch is set and smaller. */
function maxSpanMs(b: Behaviours): number {
  return b.maxSpanMs === null ? INCOME_MAX_SPAN_MS : Math.min(INCOME_MAX_SPAN_MS, b.maxSpanMs);
}

/** Rules 2 to 4, in order: limit outside 1..100 (-1140), startTime after endTime (-1171), then
 *  -1170 for a span above maxSpanMs (both times given) or a startTime before the historyDays
 *  horizon, exactly as v2 refuses (message format and HTTP status of the behaviour switches; the
 *  message names the span actually enforced). Null when the request may be served. */
function rejection(b: Behaviours, q: IncomeQuery, nowMs: number): IncomeReply | null {
  if (q.limit < 1 || q.limit > MAX_LIMIT) return errorBody(400, "-1140", "limit out of range");
  if (q.startTime !== null && q.endTime !== null && q.startTime > q.endTime)
    return errorBody(400, "-1171", "startTime must not be after endTime");
  const span = maxSpanMs(b);
  const tooWide = q.startTime !== null && q.endTime !== null && q.endTime - q.startTime > span;
  const horizon = horizonMs(b, nowMs);
  const tooOld = horizon !== null && q.startTime !== null && q.startTime < horizon;
  if (tooWide || tooOld) return errorBody(b.refusalStatus, REFUSAL_CODE, refusalMessage({ ...b, maxSpanMs: span }));
  return null;
}

/** The window served: up to endTime, else now; from startTime, else the 30 days before an
 *  endTime given alone, else no bound; never before the historyDays horizon (older bills are not
 *  served, as in v2). */
export function incomeWindow(b: Behaviours, q: IncomeQuery, nowMs: number): Window {
  const to = q.endTime ?? nowMs;
  const asked = q.startTime ?? (q.endTime !== null ? q.endTime - INCOME_END_ALONE_MS : -Infinity);
  return { from: Math.max(asked, horizonMs(b, nowMs) ?? -Infinity), to };
}

/** Items per page: `limit`, or pageCap when that switch is set and smaller. */
function pageSize(b: Behaviours, limit: number): number {
  return b.pageCap === null ? limit : Math.min(limit, b.pageCap);
}

// ---- selection ----

/** First store position whose (time, billId) is >= (strict: >) the key. The store is sorted by
 *  (time, billId) (store.ts), so this is one binary search. */
function keyBound(s: BillStore, key: IncomeCursor, strict: boolean): number {
  let lo = 0;
  let hi = s.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const t = s.times[mid] as number;
    const id = s.ids[mid] as bigint;
    const below = t < key.time || (t === key.time && (strict ? id <= key.id : id < key.id));
    if (below) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A cursor is valid when its billId exists in the history (served or not). Checked at its time
 *  first (one search); a cursor with a wrong time is still honoured when the id exists. */
function billExists(s: BillStore, c: IncomeCursor): boolean {
  const p = keyBound(s, c, false);
  if (p < s.length && s.ids[p] === c.id) return true;
  return s.ids.subarray(0, s.length).includes(c.id);
}

/** First j with idx[j] >= position (idx ascending). */
function indexBound(idx: Int32Array, position: number): number {
  let lo = 0;
  let hi = idx.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((idx[mid] as number) < position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Store positions of the bills passing asset/symbol/incomeType, ascending: all of them (null),
 *  a cached filter index (query.ts FilterIndexes), or none when a name is unknown. */
function candidates(ctx: IncomeContext, q: IncomeQuery): Int32Array | null | "none" {
  const s = ctx.store;
  const coin = q.asset === null ? -1 : (s.coins.find(q.asset) ?? -2);
  const symbol = q.symbol === null ? -1 : (s.symbols.find(q.symbol) ?? -2);
  const type = q.incomeType === null ? -1 : (anyTypeIndex(q.incomeType) ?? -2);
  if (coin === -2 || symbol === -2 || type === -2) return "none";
  return coin < 0 && symbol < 0 && type < 0 ? null : ctx.indexes.get(coin, symbol, type);
}

/**
 * Up to `want` store positions of matching, unhidden bills in the window, in the ordering,
 * strictly after the cursor: for desc, (time, billId) below the cursor's; for asc, above. The
 * store order is the asc order, so the selection is a range [lo, hi) of positions walked up or
 * down.
 */
export function selectIncome(ctx: IncomeContext, q: IncomeQuery, w: Window, want: number): number[] {
  const s = ctx.store;
  const idx = candidates(ctx, q);
  if (idx === "none") return [];
  const desc = ctx.ordering === "desc";
  let lo = s.lowerBound(w.from);
  let hi = s.upperBound(w.to);
  if (q.cursor !== null && desc) hi = Math.min(hi, keyBound(s, q.cursor, false));
  if (q.cursor !== null && !desc) lo = Math.max(lo, keyBound(s, q.cursor, true));
  const at = (j: number): number => (idx === null ? j : (idx[j] as number));
  const jLo = idx === null ? lo : indexBound(idx, lo);
  const jHi = idx === null ? hi : indexBound(idx, hi);
  const out: number[] = [];
  for (let k = 0; k < jHi - jLo && out.length < want; k++) {
    const p = at(desc ? jHi - 1 - k : jLo + k);
    if (!ctx.hidden.has(s.ids[p] as bigint)) out.push(p);
  }
  return out;
}

// ---- encoding ----

/** A bill's id or time as its v2 encoding flags have it: a string, or a bare number written from
 *  the digits (never through a JS number, ids exceed 2^53). Same bill, same spelling everywhere. */
function idJson(s: BillStore, i: number): string {
  const id = (s.ids[i] as bigint).toString();
  return encodingOf(s.enc[i] as number).idAsString ? `"${id}"` : id;
}

function timeJson(s: BillStore, i: number): string {
  const time = String(s.times[i] as number);
  return encodingOf(s.enc[i] as number).timeAsString ? `"${time}"` : time;
}

/** The reason of a transfer-like type (businessType containing "trans"): the sandbox serves
 *  USER_TRANSFER for all of them; null for every other type. */
export function transferReasonOf(type: string): string | null {
  return type.includes("trans") ? "USER_TRANSFER" : null;
}

function jsonOrNull(v: string | null): string {
  return v === null ? "null" : JSON.stringify(v);
}

/** One item: asset = coin, income = amount, incomeType = businessType, time = ctime; decimals are
 *  v2's exact strings; symbol null when the bill has none (null-symbols.ts). */
export function encodeIncomeItem(s: BillStore, i: number): string {
  const type = s.typeAt(i);
  return (
    `{"billId":${idJson(s, i)},"asset":${JSON.stringify(s.coinAt(i))},"symbol":${incomeSymbolJson(s.symbolAt(i))}` +
    `,"income":${JSON.stringify(s.amounts[i])},"incomeType":${JSON.stringify(type)}` +
    `,"balance":${JSON.stringify(s.balances[i])},"fillFee":${JSON.stringify(s.fees[i])}` +
    `,"time":${timeJson(s, i)},"transferReason":${jsonOrNull(transferReasonOf(type))}}`
  );
}

/** The page: the first `size` positions; hasNextPage iff one more was found; nextKey names the
 *  page's last item (null on the last page). */
export function encodeIncomePage(s: BillStore, positions: readonly number[], size: number): string {
  const more = positions.length > size;
  const page = more ? positions.slice(0, size) : positions;
  const last = page.at(-1);
  const nextKey =
    more && last !== undefined ? `{"nextKeyId":${idJson(s, last)},"nextKeyTime":${timeJson(s, last)}}` : "null";
  const items = page.map((p) => encodeIncomeItem(s, p));
  return `{"hasNextPage":${more},"nextKey":${nextKey},"items":[${items.join(",")}]}`;
}
