// What the simulated account does: trades (opens/closes with fills and fees), funding for the
// positions it holds, margin moves, deposits/withdrawals/transfers, and rare liquidations and
// copy-trading entries. It only says *what* happens, through a sink; times, ids and balances
// are history.ts's job (a sink instead of returned objects: a million bills, no garbage).
// Amount signs follow spec 4.1: opening a long (buying) decreases collateral, closing it
// (selling) increases it, and the reverse for shorts. fillFee is informational (it is already
// part of `amount`), written as a negative number for the fee charged.
import { decimalText, pickScale } from "./amounts.ts";
import type { SymbolInfo } from "./catalog.ts";
import type { Prng } from "./prng.ts";
import type { BusinessType } from "./types.ts";

export type BillSink = (coin: string, symbol: string, type: BusinessType, amount: string, fillFee: string) => void;

const TRACKING: readonly [BusinessType, number][] = [
  ["tracking_follow_pay", -1],
  ["tracking_system_pre_receive", 1],
  ["tracking_follow_back", 1],
  ["tracking_trader_income", 1],
  ["tracking_third_party_share", -1],
];

export class AccountSim {
  /** Open notional (integer part, coin units) per position key = symbol index * 2 + side. */
  private readonly notional: Float64Array;
  private readonly openKeys: number[] = [];
  private readonly openSlot: Int32Array;
  /** Approximate integer cash per coin, only to steer deposits/withdrawals (see note()). */
  private readonly cash = [0, 0];

  /**
   * `maxOpen` caps concurrently open positions: it bounds natural funding groups (one bill per
   * open position at each settlement, far below 100) and, for sparse histories, keeps funding
   * from dominating the mix.
   */
  constructor(
    private readonly rng: Prng,
    readonly symbols: readonly SymbolInfo[],
    private readonly maxOpen: number,
    private readonly sink: BillSink,
  ) {
    this.notional = new Float64Array(symbols.length * 2);
    this.openSlot = new Int32Array(symbols.length * 2).fill(-1);
  }

  private sym(key: number): SymbolInfo {
    return this.symbols[key >> 1] as SymbolInfo;
  }

  private setOpen(key: number, notional: number): void {
    this.notional[key] = notional;
    const slot = this.openSlot[key] as number;
    if (notional > 0 && slot < 0) {
      this.openSlot[key] = this.openKeys.length;
      this.openKeys.push(key);
    } else if (notional <= 0 && slot >= 0) {
      const last = this.openKeys.pop() as number;
      if (last !== key) {
        this.openKeys[slot] = last;
        this.openSlot[last] = slot;
      }
      this.openSlot[key] = -1;
    }
  }

  private fee(intMax: number): string {
    return decimalText(this.rng, Math.max(1, Math.floor(intMax / 1500)), this.rng.range(4, 8), -1);
  }

  private simple(coin: string, symbol: string, type: BusinessType, intMax: number, sign: number): number {
    this.sink(coin, symbol, type, decimalText(this.rng, intMax, pickScale(this.rng), sign), "0");
    return 1;
  }

  deposit(coin: string, intMax: number): number {
    return this.simple(coin, "", "deposit", intMax, 1);
  }

  /** Opens (or adds to) a position with `fills` fills. */
  open(symbolIndex: number, side: number, fills: number): number {
    const s = this.symbols[symbolIndex] as SymbolInfo;
    const key = symbolIndex * 2 + side;
    const type: BusinessType = side === 0 ? "position_open_long" : "position_open_short";
    let added = 0;
    for (let f = 0; f < fills; f++) {
      const part = 1 + this.rng.int(Math.max(1, Math.floor(s.notionalMax / fills)));
      added += part;
      this.sink(
        s.coin,
        s.name,
        type,
        decimalText(this.rng, part, pickScale(this.rng), side === 0 ? -1 : 1),
        this.fee(part),
      );
    }
    this.setOpen(key, (this.notional[key] as number) + added);
    return fills;
  }

  /** Closes part or all of an open position. */
  close(key: number, fills: number, full: boolean): number {
    const s = this.sym(key);
    const side = key & 1;
    const held = this.notional[key] as number;
    const closing = full ? held : Math.max(1, Math.floor(held * (0.2 + 0.6 * this.rng.next())));
    // Realised value differs from the opening value by the (random) price move.
    const value = Math.max(1, Math.floor(closing * (0.9 + 0.2 * this.rng.next())));
    const type: BusinessType = side === 0 ? "position_close_long" : "position_close_short";
    const part = Math.max(1, Math.floor(value / fills));
    for (let f = 0; f < fills; f++) {
      this.sink(
        s.coin,
        s.name,
        type,
        decimalText(this.rng, part, pickScale(this.rng), side === 0 ? 1 : -1),
        this.fee(part),
      );
    }
    this.setOpen(key, full ? 0 : held - closing);
    return fills;
  }

  /** One funding bill per open position (the caller puts them on the settlement ms), <= max. */
  funding(max: number): number {
    const n = Math.min(max, this.openKeys.length);
    for (let k = 0; k < n; k++) {
      const key = this.openKeys[k] as number;
      this.fundingBill(key >> 1, key & 1);
    }
    return n;
  }

  fundingBill(symbolIndex: number, side: number): void {
    const s = this.symbols[symbolIndex] as SymbolInfo;
    const held = (this.notional[symbolIndex * 2 + side] as number) || s.notionalMax / 4;
    const sign = this.rng.chance(0.55) ? -1 : 1;
    this.sink(
      s.coin,
      s.name,
      "position_funding",
      decimalText(this.rng, Math.max(1, Math.floor(held / 3000)), this.rng.range(4, 8), sign),
      "0",
    );
  }

  /** A random event of 1..min(5, maxBills) bills (the caller puts them on one ms). */
  randomEvent(maxBills: number): number {
    const rng = this.rng;
    const r = rng.next();
    const coin = rng.chance(0.8) ? "USDT" : "USDC";
    const anyOpen = this.openKeys.length > 0;
    if (r < 0.065) {
      // Money in/out of the account; the direction leans against the balance's drift so the
      // balance stays in a plausible range even over a million bills.
      const inward = rng.next() < this.inwardBias(coin);
      if (r < 0.025) return this.simple(coin, "", inward ? "deposit" : "withdraw", 8000, inward ? 1 : -1);
      return this.simple(coin, "", inward ? "transfer_in" : "transfer_out", 5000, inward ? 1 : -1);
    }
    if (r < 0.185) {
      // Margin moves belong to a position's symbol, in that symbol's coin.
      const s = anyOpen ? this.sym(rng.pick(this.openKeys)) : rng.pick(this.symbols);
      const inward = r < 0.125;
      return this.simple(
        s.coin,
        s.name,
        inward ? "margin_move_in" : "margin_move_out",
        Math.max(2, s.notionalMax / 5),
        inward ? 1 : -1,
      );
    }
    if (r < 0.189) {
      const [type, sign] = rng.pick(TRACKING);
      const s = rng.pick(this.symbols);
      return this.simple(s.coin, s.name, type, 50, sign);
    }
    if (r < 0.1905 && anyOpen && maxBills >= 3) return this.liquidation(maxBills);
    const fills = Math.min(maxBills, rng.chance(0.1) ? rng.range(2, 5) : 1);
    const shouldOpen = !anyOpen || (this.openKeys.length < this.maxOpen && rng.chance(0.52));
    if (shouldOpen) return this.open(rng.int(this.symbols.length), rng.int(2), fills);
    return this.close(rng.pick(this.openKeys), fills, rng.chance(0.6));
  }

  /** start_liquidate, forced close fills, maybe loss compensation, finish_liquidate. */
  private liquidation(maxBills: number): number {
    const key = this.rng.pick(this.openKeys);
    const s = this.sym(key);
    const withFix = maxBills >= 4 && this.rng.chance(0.5);
    const closeFills = Math.min(maxBills - 2 - (withFix ? 1 : 0), this.rng.range(1, 2));
    this.sink(s.coin, s.name, "start_liquidate", "0", "0");
    this.close(key, closeFills, true);
    if (withFix) this.simple(s.coin, s.name, "order_fix_margin_amount", Math.max(2, s.notionalMax / 100), 1);
    this.sink(s.coin, s.name, "finish_liquidate", "0", "0");
    return closeFills + (withFix ? 3 : 2);
  }

  /** Steering only: approximate integer cash per coin. Published balances use decimal.js. */
  note(coin: string, amount: string): void {
    const i = coin === "USDT" ? 0 : 1;
    this.cash[i] = (this.cash[i] as number) + parseInt(amount, 10);
  }

  private inwardBias(coin: string): number {
    const cash = this.cash[coin === "USDT" ? 0 : 1] as number;
    return cash < 5000 ? 0.85 : cash > 100000 ? 0.15 : 0.5;
  }
}
