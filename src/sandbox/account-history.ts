// The collateral numbers that follow the bill history: per coin, the latest balance at or
// before "now" and the cum_* sums of the bills up to it. Recomputed at serve time, so they move
// as appended bills arrive or the clock reaches future-dated ones.
//
// Cost: a plain re-summation would be O(n) decimal additions per request: too slow at a million
// bills (docs/design/sandbox-costs.md).
// Instead, per coin, the positions of its bills are listed once and exact partial sums are
// kept every BLOCK bills (checkpoints, built lazily as far as a request needs); a request adds
// at most BLOCK-1 bills to a checkpoint, and its result is cached until the store or the cut
// changes. Appended bills extend the lists; a late bill (inserted mid-history) rebuilds them.
//
// Attribution (documented in README.md): a bill's amount goes to the cum_* field named like its
// businessType (deposit -> cum_deposit_amount, position_funding -> cum_position_funding_amount,
// ...); start/finish_liquidate, order_fix_margin_amount and tracking_* have no cum field. The
// fillFee of position open/close bills goes, as written (negative = fee paid, not negated), to
// cum_position_fill_fee_amount, except for closes inside a liquidation (between start_liquidate
// and finish_liquidate of the same symbol), whose fillFee goes to cum_position_liquidate_fee_amount.
import { CUM_FIELDS, type CumField } from "./account-fields.ts";
import { ExactSums } from "./account-sums.ts";
import type { BillStore } from "./store.ts";
import { BUSINESS_TYPES } from "./types.ts";

const BLOCK = 1024;
const typeIndex = (t: string): number => BUSINESS_TYPES.indexOf(t as (typeof BUSINESS_TYPES)[number]);
const slotOf = (f: CumField): number => CUM_FIELDS.indexOf(f);

/** Per businessType index: the cum slot its amount is added to, or -1. */
const AMOUNT_SLOT = BUSINESS_TYPES.map((t) => slotOf(`cum_${t}_amount` as CumField));
const FILL_FEE = slotOf("cum_position_fill_fee_amount");
const LIQ_FEE = slotOf("cum_position_liquidate_fee_amount");
const OPENS = new Set([typeIndex("position_open_long"), typeIndex("position_open_short")]);
const CLOSES = new Set([typeIndex("position_close_long"), typeIndex("position_close_short")]);
const START_LIQ = typeIndex("start_liquidate");
const FINISH_LIQ = typeIndex("finish_liquidate");

export interface DerivedCollateral {
  amount: string;
  cums: Record<CumField, string>;
  created_time: string;
  updated_time: string;
}

interface CoinIndex {
  /** Store positions of the coin's bills, in store (time) order; the first n are in use. */
  pos: Int32Array;
  n: number;
  /** checkpoints[k]: sums over the coin's first k*BLOCK bills, and the liquidating symbol then. */
  checkpoints: { sums: ExactSums; liq: number }[];
}

function push(idx: CoinIndex, position: number): void {
  if (idx.n === idx.pos.length) {
    const grown = new Int32Array(Math.max(16, idx.pos.length * 2));
    grown.set(idx.pos);
    idx.pos = grown;
  }
  idx.pos[idx.n++] = position;
}

export class HistoryCollateral {
  private builtVersion = -1;
  private builtLength = -1;
  /** Id of the last bill in the store at the last build: tells appends from inserts. */
  private lastId = -1n;
  private coins: CoinIndex[] = [];
  private cache = new Map<number, { j: number; value: DerivedCollateral }>();

  constructor(private readonly store: BillStore) {}

  /** Derived collateral of `coin` from the bills at or before nowMs; null when there are none. */
  derive(coin: string, nowMs: number): DerivedCollateral | null {
    const s = this.store;
    this.sync();
    const code = s.coins.find(coin);
    const idx = code === undefined ? undefined : this.coins[code];
    if (code === undefined || idx === undefined) return null;
    const j = countBelow(idx.pos, idx.n, s.upperBound(nowMs));
    if (j === 0) return null;
    const cached = this.cache.get(code);
    if (cached !== undefined && cached.j === j) return cached.value;
    const k = Math.floor(j / BLOCK);
    this.extendCheckpoints(idx, k);
    const cp = idx.checkpoints[k] as { sums: ExactSums; liq: number };
    const sums = cp.sums.clone();
    this.run(idx, k * BLOCK, j, sums, cp.liq);
    const texts = sums.texts();
    const value: DerivedCollateral = {
      amount: s.balances[idx.pos[j - 1] as number] as string,
      cums: Object.fromEntries(CUM_FIELDS.map((f, i) => [f, texts[i] as string])) as Record<CumField, string>,
      created_time: String(s.times[idx.pos[0] as number]),
      updated_time: String(s.times[idx.pos[j - 1] as number]),
    };
    this.cache.set(code, { j, value });
    return value;
  }

  /** Adds the coin's bills [from, to) to `sums`; returns the liquidating symbol after them. */
  private run(idx: CoinIndex, from: number, to: number, sums: ExactSums, liqIn: number): number {
    const s = this.store;
    let liq = liqIn;
    for (let i = from; i < to; i++) {
      const p = idx.pos[i] as number;
      const type = s.typeCodes[p] as number;
      const slot = AMOUNT_SLOT[type] ?? -1; // unknown types (switch unknownTypes): no cum field
      if (slot >= 0) sums.add(slot, s.amounts[p] as string);
      if (type === START_LIQ) liq = s.symbolCodes[p] as number;
      else if (type === FINISH_LIQ) liq = -1;
      else if (OPENS.has(type) || CLOSES.has(type)) {
        const fee = s.fees[p] as string;
        if (fee !== "0") sums.add(CLOSES.has(type) && s.symbolCodes[p] === liq ? LIQ_FEE : FILL_FEE, fee);
      }
    }
    return liq;
  }

  private extendCheckpoints(idx: CoinIndex, k: number): void {
    while (idx.checkpoints.length <= k) {
      const n = idx.checkpoints.length;
      const prev = idx.checkpoints[n - 1] as { sums: ExactSums; liq: number };
      const sums = prev.sums.clone();
      const liq = this.run(idx, (n - 1) * BLOCK, n * BLOCK, sums, prev.liq);
      idx.checkpoints.push({ sums, liq });
    }
  }

  /**
   * Brings the per-coin lists up to date with the store. Bills appended after the last known
   * one (the usual appendBill: time >= every earlier bill) are added in O(new bills), keeping
   * all checkpoints. Any other insert (a late bill) shifts positions: full rebuild, and the
   * checkpoints are recomputed lazily. The last known bill still sitting at its old position
   * proves nothing was inserted before it (an insert there would have shifted it).
   */
  private sync(): void {
    const s = this.store;
    if (s.version === this.builtVersion && s.length === this.builtLength) return;
    const appendedOnly =
      this.builtLength > 0 && s.length > this.builtLength && s.ids[this.builtLength - 1] === this.lastId;
    if (!appendedOnly) this.coins = [];
    for (let i = appendedOnly ? this.builtLength : 0; i < s.length; i++) {
      const c = s.coinCodes[i] as number;
      let idx = this.coins[c];
      if (idx === undefined) {
        idx = { pos: new Int32Array(0), n: 0, checkpoints: [{ sums: new ExactSums(CUM_FIELDS.length), liq: -1 }] };
        this.coins[c] = idx;
      }
      push(idx, i);
    }
    this.cache.clear();
    this.builtVersion = s.version;
    this.builtLength = s.length;
    this.lastId = s.length > 0 ? (s.ids[s.length - 1] as bigint) : -1n;
  }
}

/** Number of entries of the increasing array `pos` that are < limit. */
function countBelow(pos: Int32Array, n: number, limit: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((pos[mid] as number) < limit) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
