// Sums of NUMERIC text, exact: decimal.js with room for any digits PostgreSQL stores, written back
// with the largest scale of the terms (as PostgreSQL's sum() writes it), so "1.50" + "2" is "3.50".
import { Decimal } from "../store/numeric.ts";

/** decimal.js, exact (store/numeric.ts). */
export const Exact = Decimal;
export type Exact = Decimal;

/** Digits after the point in NUMERIC text ("1.50" -> 2, "7" -> 0). */
export function scaleOf(text: string): number {
  const point = text.indexOf(".");
  return point === -1 ? 0 : text.length - point - 1;
}

export class ExactSum {
  private total: Exact = new Exact(0);
  private scale = 0;

  add(text: string): void {
    this.total = this.total.plus(text);
    this.scale = Math.max(this.scale, scaleOf(text));
  }

  /** Moves another sum's terms into this one. */
  absorb(other: ExactSum): void {
    this.total = this.total.plus(other.total);
    this.scale = Math.max(this.scale, other.scale);
  }

  get isZero(): boolean {
    return this.total.isZero();
  }

  /** The sum as NUMERIC text, at the largest scale of its terms. */
  text(): string {
    return this.total.toFixed(this.scale);
  }
}
