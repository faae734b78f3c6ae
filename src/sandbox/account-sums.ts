// Exact running sums of decimal texts as BigInt fixed point (value = v / 10^scale): several times
// faster than decimal.js, which spends most of its time parsing (docs/design/sandbox-costs.md),
// and the same exact number (the tests check it against decimal.js). The scale of a sum grows
// when a finer amount arrives, so no digit is ever dropped.

const POW10: bigint[] = [1n];
function pow10(n: number): bigint {
  while (POW10.length <= n) POW10.push((POW10[POW10.length - 1] as bigint) * 10n);
  return POW10[n] as bigint;
}

export class ExactSums {
  private readonly v: bigint[];
  private readonly scale: number[];

  constructor(n: number, v?: bigint[], scale?: number[]) {
    this.v = v ?? new Array<bigint>(n).fill(0n);
    this.scale = scale ?? new Array<number>(n).fill(8);
  }

  clone(): ExactSums {
    return new ExactSums(this.v.length, [...this.v], [...this.scale]);
  }

  /** Adds decimal text such as "-12.5" or "300" (validated as decimal text upstream). */
  add(slot: number, text: string): void {
    const dot = text.indexOf(".");
    const frac = dot < 0 ? 0 : text.length - dot - 1;
    const digits = BigInt(dot < 0 ? text : text.slice(0, dot) + text.slice(dot + 1)); // "-05" -> -5n
    let s = this.scale[slot] as number;
    if (frac > s) {
      this.v[slot] = (this.v[slot] as bigint) * pow10(frac - s);
      this.scale[slot] = s = frac;
    }
    this.v[slot] = (this.v[slot] as bigint) + digits * pow10(s - frac);
  }

  /** Plain notation, minimal digits, "0" for zero (the same text as amounts.ts decText). */
  texts(): string[] {
    return this.v.map((v, i) => {
      if (v === 0n) return "0";
      const s = this.scale[i] as number;
      const abs = (v < 0n ? -v : v).toString().padStart(s + 1, "0");
      const int = abs.slice(0, abs.length - s);
      const frac = abs.slice(abs.length - s).replace(/0+$/, "");
      return (v < 0n ? "-" : "") + int + (frac === "" ? "" : `.${frac}`);
    });
  }
}
