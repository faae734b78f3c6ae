// Decimal text for generated amounts, and the per-coin balance chain.
// Amounts are produced directly as text from random digits (no arithmetic involved); every sum
// (the balance chain) is done with decimal.js, never with JS floats.
import { Decimal } from "decimal.js";
import type { Prng } from "./prng.ts";

/** Wide precision so that sums of 8-decimal amounts are exact; fixed notation for text. */
export const Dec = Decimal.clone({ precision: 60, toExpNeg: -100, toExpPos: 100 });
export type Dec = InstanceType<typeof Dec>;

const POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000];
// Fractional digits of generated amounts: every scale 0..8 occurs, 2/4/6/8 most often.
const SCALES = [0, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 4, 5, 6, 6, 6, 7, 8, 8, 8];

export function pickScale(rng: Prng): number {
  return rng.pick(SCALES);
}

/**
 * A non-zero decimal text with integer part below `intMax` and exactly `scale` fractional
 * digits (so trailing zeros such as "1500.00" can occur), negative when sign < 0.
 */
export function decimalText(rng: Prng, intMax: number, scale: number, sign: number): string {
  const intPart = rng.int(Math.max(1, intMax));
  let text: string;
  if (scale > 0) {
    let frac = rng.int(POW10[scale] as number);
    if (intPart === 0 && frac === 0) frac = 1;
    text = `${intPart}.${String(frac).padStart(scale, "0")}`;
  } else {
    text = String(intPart === 0 ? 1 : intPart);
  }
  return sign < 0 ? `-${text}` : text;
}

/** Canonical text of a Decimal: fixed notation, minimal digits, never "-0". */
export function decText(d: Dec): string {
  return d.isZero() ? "0" : d.toFixed();
}

/** Running balance per coin (by coin code): balance = previous balance of that coin + amount. */
export class Balances {
  private readonly byCoin: Dec[] = [];

  add(coinCode: number, amount: string): string {
    const next = (this.byCoin[coinCode] ?? new Dec(0)).plus(new Dec(amount));
    this.byCoin[coinCode] = next;
    return decText(next);
  }
}

/** balance text + amount text, exactly (decimal.js). */
export function addText(balance: string, amount: string): string {
  return decText(new Dec(balance).plus(new Dec(amount)));
}

export function isDecimalText(s: string): boolean {
  return /^-?\d+(\.\d+)?$/.test(s);
}
