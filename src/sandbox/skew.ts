// Switch `filterSkewMs`: the exchange filters on a time up to N ms after the ctime it returns.
// Each bill has a hidden filter time = ctime + offset, offset in [0, N], a pure function of the
// seed and the bill id (so appended and late bills get theirs too, and the order bills are added
// in does not matter). startTime/endTime match the filter time, and the page order follows it
// (then billId): the exchange orders by the time it indexes on. Implemented as a view of the
// store sorted by (filter time, billId), rebuilt lazily when the store changes (O(n log n)).
import { Prng } from "./prng.ts";
import { FilterIndexes, type BillAxis } from "./query.ts";
import { firstAfter, firstAtOrAfter, type BillStore } from "./store.ts";

function fmix(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The store's columns re-ordered by filter time; `origin[j]` is the store position of view j. */
class SkewedAxis implements BillAxis {
  readonly length: number;
  readonly times: Float64Array;
  readonly coinCodes: Uint8Array;
  readonly symbolCodes: Uint16Array;
  readonly typeCodes: Uint8Array;
  readonly coins: BillStore["coins"];
  readonly symbols: BillStore["symbols"];
  readonly version: number;
  readonly origin: Int32Array;

  constructor(store: BillStore, filterTime: (i: number) => number) {
    const n = store.length;
    const ft = new Float64Array(n);
    for (let i = 0; i < n; i++) ft[i] = filterTime(i);
    const ids = store.ids;
    const order = Array.from({ length: n }, (_, i) => i);
    order.sort((a, b) => (ft[a] as number) - (ft[b] as number) || ((ids[a] as bigint) < (ids[b] as bigint) ? -1 : 1));
    this.length = n;
    this.origin = Int32Array.from(order);
    this.times = new Float64Array(n);
    this.coinCodes = new Uint8Array(n);
    this.symbolCodes = new Uint16Array(n);
    this.typeCodes = new Uint8Array(n);
    for (let j = 0; j < n; j++) {
      const i = order[j] as number;
      this.times[j] = ft[i] as number;
      this.coinCodes[j] = store.coinCodes[i] as number;
      this.symbolCodes[j] = store.symbolCodes[i] as number;
      this.typeCodes[j] = store.typeCodes[i] as number;
    }
    this.coins = store.coins;
    this.symbols = store.symbols;
    this.version = store.version;
  }

  lowerBound(t: number, from = 0, to = this.length): number {
    return firstAtOrAfter(this.times, t, from, to);
  }

  upperBound(t: number, from = 0, to = this.length): number {
    return firstAfter(this.times, t, from, to);
  }
}

export class FilterTimes {
  private readonly k1: number;
  private readonly k2: number;
  private built: { axis: SkewedAxis; indexes: FilterIndexes; length: number } | null = null;

  constructor(
    private readonly store: BillStore,
    seed: number,
    private readonly maxSkewMs: number,
  ) {
    const rng = new Prng(seed, "filter-skew");
    this.k1 = rng.u32();
    this.k2 = rng.u32();
  }

  /** The hidden offset of a bill: in [0, maxSkewMs], from the seed and the bill id only. */
  offset(billId: bigint): number {
    if (this.maxSkewMs === 0) return 0;
    const lo = Number(billId & 0xffffffffn);
    const hi = Number((billId >> 32n) & 0xffffffffn);
    const a = fmix(lo ^ this.k1 ^ Math.imul(hi, 0x9e3779b1));
    const b = fmix(a ^ this.k2 ^ hi);
    return (a * 2 ** 21 + (b >>> 11)) % (this.maxSkewMs + 1);
  }

  filterTimeAt(i: number): number {
    return (this.store.times[i] as number) + this.offset(this.store.ids[i] as bigint);
  }

  /** The filter-time view and its filter indexes, rebuilt when the store changed. */
  view(): { axis: SkewedAxis; indexes: FilterIndexes } {
    const s = this.store;
    if (this.built === null || this.built.axis.version !== s.version || this.built.length !== s.length) {
      const axis = new SkewedAxis(s, (i) => this.filterTimeAt(i));
      this.built = { axis, indexes: new FilterIndexes(axis), length: s.length };
    }
    return this.built;
  }
}
