// Amounts for a tool that takes at most a fixed number of decimals: each row is rounded half-even
// and what the rounding took off is carried into the next row of the same coin, so the file's total
// per coin stays the ledger's (to the last representable digit). A carry is at most half a unit of
// the last decimal, so a row never changes sign: at worst it rounds to zero, and then it has no line
// and its amount goes on in the carry.
import { Exact, scaleOf } from "./exact-sum.ts";

export class CarryRounding {
  private readonly carry = new Map<string, Exact>();

  constructor(private readonly decimals: number) {}

  /** The amount to write (signed text), or null when it rounds to zero. */
  round(coin: string, amount: string): string | null {
    const exact = new Exact(amount).plus(this.carry.get(coin) ?? 0);
    const written = exact.toDecimalPlaces(this.decimals, Exact.ROUND_HALF_EVEN);
    this.carry.set(coin, exact.minus(written));
    if (written.isZero()) return null;
    // Written as stored when nothing was rounded or carried ("1.50" stays "1.50").
    return written.eq(amount) && scaleOf(amount) <= this.decimals ? amount : written.toFixed();
  }
}
