// The v3 ledger endpoint, POST /capi/v3/account/income, over the same history as v2 (same bill
// ids, amounts, balances). As public sources describe it (issue 16): JSON body; `asset`, `symbol`,
// `incomeType`, `startTime`, `endTime`, `limit` (1..100, default 20) and the cursor `nextKeyId` +
// `nextKeyTime`, all optional; range rules: both times at most 100 days apart, `startTime` alone
// up to now, `endTime` alone the 30 days before it; errors -1140 (limit), -1171 (start after end),
// -1170 (too old or too wide, in the refusal status of the behaviour switches). The response is not
// wrapped: {hasNextPage, nextKey, items}. Pages follow (time, billId), newest first by default.
import { businessTypeIndex } from "./store.ts";
import { horizonMs, refusalMessage, REFUSAL_CODE, type Behaviours } from "./behaviours.ts";
import type { BillStore } from "./store.ts";

const DAY_MS = 86_400_000;
export const INCOME_MAX_SPAN_MS = 100 * DAY_MS;
const END_ALONE_SPAN_MS = 30 * DAY_MS;
const ID_AS_STRING = 2;
const TIME_AS_STRING = 4;

export type IncomeOrdering = "desc" | "asc";
export const INCOME_ORDERINGS: readonly IncomeOrdering[] = ["desc", "asc"];

export interface IncomeQuery {
  asset: string | null;
  symbol: string | null;
  incomeType: string | null;
  startTime: number | null;
  endTime: number | null;
  limit: number;
  cursor: { id: bigint; time: number } | null;
}

export type IncomeReply = { status: number; body: string };

export interface IncomeContext {
  store: BillStore;
  behaviours: Behaviours;
  ordering: IncomeOrdering;
  hidden: Set<bigint>;
}

function error(status: number, code: string, msg: string): IncomeReply {
  return { status, body: JSON.stringify({ code, msg, requestTime: Date.now() }) };
}

/** Handles one request body at `now`: a page, or the exchange's error. */
export function serveIncome(ctx: IncomeContext, raw: string, now: number): IncomeReply {
  const parsed = parseIncomeQuery(raw, ctx.behaviours.extraTypes);
  if (typeof parsed === "string") return error(400, "40009", parsed);
  const q = parsed;
  if (q.limit < 1 || q.limit > 100) return error(400, "-1140", "limit out of range");
  if (q.startTime !== null && q.endTime !== null && q.startTime > q.endTime)
    return error(400, "-1171", "startTime must be before endTime");
  const b = ctx.behaviours;
  const end = q.endTime ?? now;
  const start = q.startTime ?? (q.endTime !== null ? q.endTime - END_ALONE_SPAN_MS : null);
  const horizon = horizonMs(b, now);
  const maxSpan = Math.min(INCOME_MAX_SPAN_MS, b.maxSpanMs ?? Infinity);
  const tooWide = q.startTime !== null && q.endTime !== null && q.endTime - q.startTime > maxSpan;
  const tooOld = horizon !== null && q.startTime !== null && q.startTime < horizon;
  if (tooWide || tooOld) return error(b.refusalStatus, REFUSAL_CODE, refusalMessage(b));
  const from = Math.max(start ?? -Infinity, horizon ?? -Infinity);
  if (q.cursor !== null && !cursorExists(ctx.store, q.cursor)) return error(400, "40009", "invalid nextKey");
  const cap = b.pageCap === null ? q.limit : Math.min(q.limit, b.pageCap);
  const positions = select(ctx, q, from, end, cap + 1);
  const more = positions.length > cap;
  const page = more ? positions.slice(0, cap) : positions;
  const lastPos = page.at(-1);
  const nextKey =
    more && lastPos !== undefined
      ? `{"nextKeyId":${idText(ctx.store, lastPos)},"nextKeyTime":${timeText(ctx.store, lastPos)}}`
      : "null";
  const items = page.map((p) => encodeIncomeItem(ctx.store, p));
  return { status: 200, body: `{"hasNextPage":${more},"nextKey":${nextKey},"items":[${items.join(",")}]}` };
}

/** Validates the body: a message (40009) or the query. */
export function parseIncomeQuery(raw: string, extraTypes: readonly string[]): IncomeQuery | string {
  let body: unknown = {};
  if (raw.trim() !== "") {
    try {
      // Bare integers beyond 2^53 (the cursor's id) are read as text, never as a rounded number.
      body = JSON.parse(raw.replace(/("nextKeyId"\s*:\s*)(\d+)/, '$1"$2"'));
    } catch {
      return "request body is not valid JSON";
    }
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) return "request body must be a JSON object";
  const o = body as Record<string, unknown>;
  const texts: Record<string, string | null> = {};
  for (const key of ["asset", "symbol", "incomeType"]) {
    const v = o[key];
    if (v === undefined || v === null || v === "") texts[key] = null;
    else if (typeof v !== "string") return `${key} must be a string`;
    else texts[key] = v;
  }
  const type = texts.incomeType ?? null;
  if (type !== null && businessTypeIndex(type) === undefined && !extraTypes.includes(type))
    return `incomeType ${JSON.stringify(type)} is not supported`;
  const ints: Record<string, number | null> = {};
  for (const key of ["startTime", "endTime", "limit", "nextKeyTime"]) {
    const v = o[key];
    if (v === undefined || v === null || v === "") ints[key] = null;
    else {
      const n = typeof v === "number" ? v : typeof v === "string" && /^-?\d{1,16}$/.test(v) ? Number(v) : NaN;
      if (!Number.isSafeInteger(n)) return `${key} must be an integer`;
      ints[key] = n;
    }
  }
  const idRaw = o.nextKeyId;
  let cursor: IncomeQuery["cursor"] = null;
  if (idRaw !== undefined && idRaw !== null && idRaw !== "") {
    if (typeof idRaw !== "string" || !/^\d{1,20}$/.test(idRaw)) return "nextKeyId must be an integer";
    if (ints.nextKeyTime === null) return "nextKeyId and nextKeyTime go together";
    cursor = { id: BigInt(idRaw), time: ints.nextKeyTime! };
  } else if (ints.nextKeyTime !== null) {
    return "nextKeyId and nextKeyTime go together";
  }
  return {
    asset: texts.asset ?? null,
    symbol: texts.symbol ?? null,
    incomeType: type,
    startTime: ints.startTime ?? null,
    endTime: ints.endTime ?? null,
    limit: ints.limit ?? 20,
    cursor,
  };
}

function cursorExists(store: BillStore, c: { id: bigint; time: number }): boolean {
  for (let p = store.lowerBound(c.time); p < store.upperBound(c.time); p++) if (store.ids[p] === c.id) return true;
  return false;
}

/**
 * Up to `want` positions of matching bills in [from, to], in the ordering, strictly after the
 * cursor: one millisecond's bills at a time, sorted by id within it.
 */
function select(ctx: IncomeContext, q: IncomeQuery, from: number, to: number, want: number): number[] {
  const s = ctx.store;
  const out: number[] = [];
  const desc = ctx.ordering === "desc";
  let t = q.cursor ? q.cursor.time : desc ? to : from;
  if (desc ? t > to : t < from) t = desc ? to : from;
  // Position of the first millisecond group to read.
  let p = desc ? s.upperBound(t) - 1 : s.lowerBound(t);
  while (out.length < want && p >= 0 && p < s.length) {
    const time = s.times[p] as number;
    if (desc ? time < from : time > to) break;
    const lo = s.lowerBound(time);
    const hi = s.upperBound(time);
    if (time >= from && time <= to) {
      const group: number[] = [];
      for (let i = lo; i < hi; i++) if (matches(ctx, q, i)) group.push(i);
      group.sort((a, b) => cmp(s.ids[a] as bigint, s.ids[b] as bigint) * (desc ? -1 : 1));
      for (const i of group) {
        if (q.cursor && time === q.cursor.time) {
          const id = s.ids[i] as bigint;
          if (desc ? id >= q.cursor.id : id <= q.cursor.id) continue;
        }
        out.push(i);
        if (out.length >= want) break;
      }
    }
    p = desc ? lo - 1 : hi;
  }
  return out;
}

function matches(ctx: IncomeContext, q: IncomeQuery, i: number): boolean {
  const s = ctx.store;
  if (ctx.hidden.size > 0 && ctx.hidden.has(s.ids[i] as bigint)) return false;
  if (q.asset !== null && s.coinAt(i) !== q.asset) return false;
  if (q.symbol !== null && s.symbolAt(i) !== q.symbol) return false;
  if (q.incomeType !== null && s.typeAt(i) !== q.incomeType) return false;
  return true;
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The bill's id and time as v2 writes them (string or bare number, per bill). */
function idText(s: BillStore, i: number): string {
  const id = (s.ids[i] as bigint).toString();
  return (s.enc[i] as number) & ID_AS_STRING ? `"${id}"` : id;
}

function timeText(s: BillStore, i: number): string {
  const time = String(s.times[i] as number);
  return (s.enc[i] as number) & TIME_AS_STRING ? `"${time}"` : time;
}

/** A transfer's reason (the sandbox's own: USER_TRANSFER for transfer-like types), else null. */
export function transferReasonOf(type: string): string | null {
  return type.includes("trans") ? "USER_TRANSFER" : null;
}

export function encodeIncomeItem(s: BillStore, i: number): string {
  const symbol = s.symbolAt(i);
  const type = s.typeAt(i);
  const reason = transferReasonOf(type);
  return (
    `{"billId":${idText(s, i)},"asset":${JSON.stringify(s.coinAt(i))},"symbol":${symbol === "" ? "null" : JSON.stringify(symbol)}` +
    `,"income":${JSON.stringify(s.amounts[i])},"incomeType":${JSON.stringify(type)},"balance":${JSON.stringify(s.balances[i])}` +
    `,"fillFee":${JSON.stringify(s.fees[i])},"time":${timeText(s, i)},"transferReason":${reason === null ? "null" : JSON.stringify(reason)}}`
  );
}
