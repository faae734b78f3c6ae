// A fleet account's activity after start: the generator's AccountSim, on the account's own seeded
// stream, writing through appendBill. Every new bill is at "now" (or at the account's latest bill
// time, if later), gets the next id, and its balance continues its coin's chain exactly.
import { AccountSim } from "./activity.ts";
import { appendBill } from "./append.ts";
import type { SymbolInfo } from "./catalog.ts";
import type { History } from "./history.ts";
import { Prng } from "./prng.ts";
import type { SandboxBill } from "./types.ts";

/** Open positions the continued activity may hold at once (as in the generator's sparse histories). */
const MAX_OPEN = 4;

export class ContinuedActivity {
  private readonly sim: AccountSim;
  private out: SandboxBill[] = [];
  private nowMs = 0;

  /** `symbols`: the ones the history was generated with (historySymbols). */
  constructor(history: History, symbols: readonly SymbolInfo[], seed: number) {
    this.sim = new AccountSim(
      new Prng(seed, "fleet-live"),
      symbols,
      MAX_OPEN,
      (coin, symbol, businessType, amount, fillFee) => {
        this.out.push(appendBill(history, { coin, symbol, businessType, amount, fillFee }, this.nowMs));
        this.sim.note(coin, amount);
      },
    );
    // Deposits and withdrawals lean against the balance: start from each coin's latest one.
    const s = history.store;
    const seen = new Set<number>();
    for (let k = s.length - 1; k >= 0; k--) {
      const c = s.coinCodes[k] as number;
      if (seen.has(c)) continue;
      seen.add(c);
      this.sim.note(s.coinAt(k), s.balances[k] as string);
    }
  }

  /** n new bills (an event's bills share one millisecond), in order. */
  append(n: number, nowMs: number): SandboxBill[] {
    this.out = [];
    this.nowMs = nowMs;
    while (this.out.length < n) this.sim.randomEvent(n - this.out.length);
    return this.out;
  }
}
