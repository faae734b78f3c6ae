// Bill history query: validation of the request body, filtering, ordering and selection.
// Time windows are found by binary search on the time-sorted store; field filters (coin,
// symbol, businessType) use a per-combination position index, built once on first use (O(n))
// and then searched in O(log n + k). Indexes are dropped when a bill is inserted. The search
// runs on a BillAxis: the store itself, or its view in filter-time order (skew.ts).
import type { Prng } from "./prng.ts";
import { anyTypeIndex, businessTypeIndex, type BillStore } from "./store.ts";
import type { Ordering } from "./types.ts";

/** What selection reads: the time-sorted store, or a re-ordered view of it (skew.ts), whose
 *  positions the caller maps back to store positions. */
export type BillAxis = Pick<
  BillStore,
  | "length"
  | "times"
  | "coinCodes"
  | "symbolCodes"
  | "typeCodes"
  | "coins"
  | "symbols"
  | "version"
  | "lowerBound"
  | "upperBound"
>;

export interface BillsQuery {
  coin: string | null;
  symbol: string | null;
  businessType: string | null;
  startTime: number | null;
  endTime: number | null;
  limit: number;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; msg: string };

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

/** Absent, null and "" all mean "not given" in a request body (both endpoints). */
export function isAbsent(v: unknown): boolean {
  return v === undefined || v === null || v === "";
}

export function text(body: Record<string, unknown>, key: string): Parsed<string | null> {
  const v = body[key];
  if (isAbsent(v)) return { ok: true, value: null };
  if (typeof v !== "string") return { ok: false, msg: `${key} must be a string` };
  return { ok: true, value: v };
}

/** An integer given as a JSON number or a numeric string. */
export function integer(body: Record<string, unknown>, key: string): Parsed<number | null> {
  const v = body[key];
  if (isAbsent(v)) return { ok: true, value: null };
  const n = typeof v === "number" ? v : typeof v === "string" && /^-?\d{1,16}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n)) return { ok: false, msg: `${key} must be an integer` };
  return { ok: true, value: n };
}

export interface FilterFields {
  coin: string | null;
  symbol: string | null;
  type: string | null;
  startTime: number | null;
  endTime: number | null;
  limit: number | null;
}

/** The filter fields both endpoints take, under each one's names for the coin and the type: texts,
 *  integers, and a type among spec 4.1's businessType values or `extraTypes` (the sandbox's
 *  unknown types). */
export function filterFields(
  b: Record<string, unknown>,
  names: { coin: string; type: string },
  extraTypes: readonly string[],
): Parsed<FilterFields> {
  const coin = text(b, names.coin);
  if (!coin.ok) return coin;
  const symbol = text(b, "symbol");
  if (!symbol.ok) return symbol;
  const type = text(b, names.type);
  if (!type.ok) return type;
  if (type.value !== null && businessTypeIndex(type.value) === undefined && !extraTypes.includes(type.value)) {
    return { ok: false, msg: `${names.type} ${JSON.stringify(type.value)} is not supported` };
  }
  const startTime = integer(b, "startTime");
  if (!startTime.ok) return startTime;
  const endTime = integer(b, "endTime");
  if (!endTime.ok) return endTime;
  const limit = integer(b, "limit");
  if (!limit.ok) return limit;
  const value = { coin: coin.value, symbol: symbol.value, type: type.value };
  return { ok: true, value: { ...value, startTime: startTime.value, endTime: endTime.value, limit: limit.value } };
}

/** `extraTypes`: businessType filter values accepted beyond spec 4.1 (the sandbox's unknown types). */
export function parseBillsQuery(raw: string, extraTypes: readonly string[] = []): Parsed<BillsQuery> {
  let body: unknown = {};
  if (raw.trim() !== "") {
    try {
      body = JSON.parse(raw);
    } catch {
      return { ok: false, msg: "request body is not valid JSON" };
    }
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    return { ok: false, msg: "request body must be a JSON object" };
  const b = body as Record<string, unknown>;
  const fields = filterFields(b, { coin: "coin", type: "businessType" }, extraTypes);
  if (!fields.ok) return fields;
  const { coin, symbol, type: businessType, startTime, endTime, limit } = fields.value;
  const lim = limit ?? DEFAULT_LIMIT;
  if (lim < 1 || lim > MAX_LIMIT) return { ok: false, msg: `limit must be an integer between 1 and ${MAX_LIMIT}` };
  return {
    ok: true,
    value: {
      coin,
      symbol,
      businessType,
      startTime,
      endTime,
      limit: lim,
    },
  };
}

export interface SelectOptions {
  ordering: Ordering;
  startInclusive: boolean;
  endInclusive: boolean;
  shuffleRng: Prng;
  /** Nothing before this time matches (the retention horizon), null for none. */
  minTime?: number | null;
  /** Positions (of the axis selected on) the exchange does not serve yet (Sandbox.hideBill). */
  isHidden?: ((position: number) => boolean) | undefined;
}

export interface Selection {
  positions: number[];
  hasNextPage: boolean;
}

/** Cap on cached index entries in total (4 bytes each): ~16 MB, whatever the filters asked. */
const MAX_CACHED_ENTRIES = 4_000_000;

/** Positions (ascending) of the bills matching a field-filter combination, cached per store version. */
export class FilterIndexes {
  private version = -1;
  private readonly cache = new Map<string, Int32Array>();
  private entries = 0;

  constructor(private readonly store: BillAxis) {}

  get(coin: number, symbol: number, type: number): Int32Array {
    const s = this.store;
    if (s.version !== this.version) {
      this.cache.clear();
      this.entries = 0;
      this.version = s.version;
    }
    const key = `${coin}|${symbol}|${type}`;
    let idx = this.cache.get(key);
    if (idx === undefined) {
      const out: number[] = [];
      for (let i = 0; i < s.length; i++) {
        if (coin >= 0 && s.coinCodes[i] !== coin) continue;
        if (symbol >= 0 && s.symbolCodes[i] !== symbol) continue;
        if (type >= 0 && s.typeCodes[i] !== type) continue;
        out.push(i);
      }
      idx = Int32Array.from(out);
      // Evict oldest first until the new index fits.
      for (const [k, v] of this.cache) {
        if (this.entries + idx.length <= MAX_CACHED_ENTRIES) break;
        this.cache.delete(k);
        this.entries -= v.length;
      }
      this.cache.set(key, idx);
      this.entries += idx.length;
    }
    return idx;
  }
}

/** First j in [0, idx.length) whose bill time is >= t (strict: > t). */
function bound(store: BillAxis, idx: Int32Array, t: number, strict: boolean): number {
  let lo = 0;
  let hi = idx.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = store.times[idx[mid] as number] as number;
    if (v < t || (strict && v === t)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function selectBills(store: BillAxis, indexes: FilterIndexes, q: BillsQuery, o: SelectOptions): Selection {
  const coin = q.coin === null ? -1 : (store.coins.find(q.coin) ?? -2);
  const symbol = q.symbol === null ? -1 : (store.symbols.find(q.symbol) ?? -2);
  const type = q.businessType === null ? -1 : (anyTypeIndex(q.businessType) as number);
  if (coin === -2 || symbol === -2) return { positions: [], hasNextPage: false };
  const filtered = coin >= 0 || symbol >= 0 || type >= 0;
  const idx = filtered ? indexes.get(coin, symbol, type) : null;
  const size = idx === null ? store.length : idx.length;
  const at = (j: number): number => (idx === null ? j : (idx[j] as number));
  // Window [lo, hi) in index space; inclusivity decides which side of equal times we cut.
  let lo = 0;
  let hi = size;
  if (q.startTime !== null) {
    lo =
      idx === null
        ? o.startInclusive
          ? store.lowerBound(q.startTime)
          : store.upperBound(q.startTime)
        : bound(store, idx, q.startTime, !o.startInclusive);
  }
  if (o.minTime != null)
    lo = Math.max(lo, idx === null ? store.lowerBound(o.minTime) : bound(store, idx, o.minTime, false));
  if (q.endTime !== null) {
    hi =
      idx === null
        ? o.endInclusive
          ? store.upperBound(q.endTime)
          : store.lowerBound(q.endTime)
        : bound(store, idx, q.endTime, o.endInclusive);
  }
  if (hi <= lo) return { positions: [], hasNextPage: false };
  if (o.isHidden) return selectVisible(lo, hi, at, q.limit, o);
  const count = hi - lo;
  const take = Math.min(q.limit, count);
  const positions: number[] = [];
  if (o.ordering === "asc") {
    for (let j = lo; j < lo + take; j++) positions.push(at(j));
  } else {
    for (let j = hi - 1; j >= hi - take; j--) positions.push(at(j));
    if (o.ordering === "newest-shuffled") o.shuffleRng.shuffle(positions);
  }
  return { positions, hasNextPage: count > take };
}

/** The selection as if hidden bills did not exist: skipped before the limit, not counted. */
function selectVisible(lo: number, hi: number, at: (j: number) => number, limit: number, o: SelectOptions): Selection {
  const visible: number[] = [];
  for (let j = lo; j < hi; j++) if (!o.isHidden!(at(j))) visible.push(at(j));
  const take = Math.min(limit, visible.length);
  const positions = o.ordering === "asc" ? visible.slice(0, take) : visible.slice(visible.length - take).reverse();
  if (o.ordering === "newest-shuffled") o.shuffleRng.shuffle(positions);
  return { positions, hasNextPage: visible.length > take };
}
