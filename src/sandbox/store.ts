// Column store of the bill history: typed columns plus three string columns hold a million bills
// in far less memory than a million objects would (docs/design/sandbox-costs.md), and the time
// column, kept sorted by (cTimeMs, billId), is what the binary searches of query.ts run on.
import { BUSINESS_TYPES, UNKNOWN_BUSINESS_TYPES, type SandboxBill } from "./types.ts";

const TYPE_INDEX = new Map<string, number>(BUSINESS_TYPES.map((t, i) => [t, i]));
/** Type codes: the spec's types, then the sandbox's own unknown ones (switch `unknownTypes`). */
const ALL_TYPES: readonly string[] = [...BUSINESS_TYPES, ...UNKNOWN_BUSINESS_TYPES];
const ALL_TYPE_INDEX = new Map<string, number>(ALL_TYPES.map((t, i) => [t, i]));

/** Code of a spec 4.1 businessType (undefined for anything else). */
export function businessTypeIndex(type: string): number | undefined {
  return TYPE_INDEX.get(type);
}

/** Code of a spec businessType or of one of UNKNOWN_BUSINESS_TYPES. */
export function anyTypeIndex(type: string): number | undefined {
  return ALL_TYPE_INDEX.get(type);
}

/** Interning table: small integer codes for coins and symbols. */
class Names {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();
  code(name: string): number {
    let c = this.index.get(name);
    if (c === undefined) {
      c = this.list.length;
      this.list.push(name);
      this.index.set(name, c);
    }
    return c;
  }
  find(name: string): number | undefined {
    return this.index.get(name);
  }
}

export interface BillRow {
  timeMs: number;
  id: bigint;
  coin: number;
  symbol: number;
  type: number;
  /** Encoding flags, see encode.ts. Stored so a bill is always encoded the same way. */
  enc: number;
  amount: string;
  balance: string;
  fillFee: string;
}

export class BillStore {
  length = 0;
  times: Float64Array;
  ids: BigInt64Array;
  coinCodes: Uint8Array;
  symbolCodes: Uint16Array;
  typeCodes: Uint8Array;
  enc: Uint8Array;
  amounts: string[];
  balances: string[];
  fees: string[];
  readonly coins = new Names();
  readonly symbols = new Names();
  /** Bumped on every insert; filter indexes built for an older version are discarded. */
  version = 0;
  private maxIdValue = 0n;

  constructor(capacity: number) {
    const cap = Math.max(16, capacity);
    this.times = new Float64Array(cap);
    this.ids = new BigInt64Array(cap);
    this.coinCodes = new Uint8Array(cap);
    this.symbolCodes = new Uint16Array(cap);
    this.typeCodes = new Uint8Array(cap);
    this.enc = new Uint8Array(cap);
    this.amounts = [];
    this.balances = [];
    this.fees = [];
  }

  private grow(): void {
    const cap = this.times.length * 2;
    const g = <T extends Float64Array | BigInt64Array | Uint8Array | Uint16Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a as never);
      return b;
    };
    this.times = g(this.times, (n) => new Float64Array(n));
    this.ids = g(this.ids, (n) => new BigInt64Array(n));
    this.coinCodes = g(this.coinCodes, (n) => new Uint8Array(n));
    this.symbolCodes = g(this.symbolCodes, (n) => new Uint16Array(n));
    this.typeCodes = g(this.typeCodes, (n) => new Uint8Array(n));
    this.enc = g(this.enc, (n) => new Uint8Array(n));
  }

  private write(i: number, r: BillRow): void {
    if (r.id > this.maxIdValue) this.maxIdValue = r.id;
    this.times[i] = r.timeMs;
    this.ids[i] = r.id;
    this.coinCodes[i] = r.coin;
    this.symbolCodes[i] = r.symbol;
    this.typeCodes[i] = r.type;
    this.enc[i] = r.enc;
    this.amounts[i] = r.amount;
    this.balances[i] = r.balance;
    this.fees[i] = r.fillFee;
  }

  /** Appends in order; the generator guarantees (timeMs, id) is increasing. Positional
   *  arguments rather than a row object: this runs a million times at start-up. */
  push(
    timeMs: number,
    id: bigint,
    coin: number,
    symbol: number,
    type: number,
    enc: number,
    amount: string,
    balance: string,
    fillFee: string,
  ): void {
    if (this.length === this.times.length) this.grow();
    const i = this.length++;
    if (id > this.maxIdValue) this.maxIdValue = id;
    this.times[i] = timeMs;
    this.ids[i] = id;
    this.coinCodes[i] = coin;
    this.symbolCodes[i] = symbol;
    this.typeCodes[i] = type;
    this.enc[i] = enc;
    this.amounts.push(amount);
    this.balances.push(balance);
    this.fees.push(fillFee);
  }

  /** Inserts keeping the (timeMs, id) order; O(n) shift, fine for occasional late bills. */
  insertAt(pos: number, r: BillRow): void {
    if (this.length === this.times.length) this.grow();
    const n = this.length;
    this.times.copyWithin(pos + 1, pos, n);
    this.ids.copyWithin(pos + 1, pos, n);
    this.coinCodes.copyWithin(pos + 1, pos, n);
    this.symbolCodes.copyWithin(pos + 1, pos, n);
    this.typeCodes.copyWithin(pos + 1, pos, n);
    this.enc.copyWithin(pos + 1, pos, n);
    this.amounts.splice(pos, 0, r.amount);
    this.balances.splice(pos, 0, r.balance);
    this.fees.splice(pos, 0, r.fillFee);
    this.length = n + 1;
    this.write(pos, r);
    this.version++;
  }

  /** First position whose time is >= t. */
  lowerBound(t: number, from = 0, to = this.length): number {
    return firstAtOrAfter(this.times, t, from, to);
  }

  /** First position whose time is > t. */
  upperBound(t: number, from = 0, to = this.length): number {
    return firstAfter(this.times, t, from, to);
  }

  coinAt(i: number): string {
    return this.coins.list[this.coinCodes[i] as number] as string;
  }
  symbolAt(i: number): string {
    return this.symbols.list[this.symbolCodes[i] as number] as string;
  }
  typeAt(i: number): string {
    return ALL_TYPES[this.typeCodes[i] as number] as string;
  }

  bill(i: number): SandboxBill {
    return {
      billId: (this.ids[i] as bigint).toString(),
      coin: this.coinAt(i),
      symbol: this.symbolAt(i),
      businessType: this.typeAt(i),
      amount: this.amounts[i] as string,
      balance: this.balances[i] as string,
      fillFee: this.fees[i] as string,
      cTimeMs: this.times[i] as number,
    };
  }

  maxId(): bigint {
    return this.maxIdValue;
  }
}

/** First index in [from, to) of ascending `times` whose time is >= t (to when none). */
export function firstAtOrAfter(times: ArrayLike<number>, t: number, from: number, to: number): number {
  return firstWhere(times, (x) => x >= t, from, to);
}

/** First index in [from, to) of ascending `times` whose time is > t (to when none). */
export function firstAfter(times: ArrayLike<number>, t: number, from: number, to: number): number {
  return firstWhere(times, (x) => x > t, from, to);
}

/** Binary search for the first index whose time passes `test` (monotone over ascending times). */
function firstWhere(times: ArrayLike<number>, test: (time: number) => boolean, from: number, to: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (test(times[mid] as number)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
