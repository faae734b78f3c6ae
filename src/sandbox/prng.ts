// Seeded PRNG (sfc32). Fast, 32-bit state, good enough statistics for test data, and — unlike
// Math.random — reproducible, which is what "same seed => byte-identical history" needs.
// Independent streams (history, encodings, faults, shuffles) are derived from (seed, stream
// name) so that e.g. turning faults on does not change the generated history.

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = "") {
    // Mix seed and stream name into four words (cyrb128-style), then warm up.
    let h1 = 1779033703 ^ (seed | 0);
    let h2 = 3144134277 ^ Math.floor(seed / 4294967296);
    let h3 = 1013904242;
    let h4 = 2773480762;
    const text = `${stream}#${seed}`;
    for (let i = 0; i < text.length; i++) {
      const k = text.charCodeAt(i);
      h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
      h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
      h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
      h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
    }
    this.a = h1 >>> 0;
    this.b = h2 >>> 0;
    this.c = h3 >>> 0;
    this.d = h4 >>> 0;
    for (let i = 0; i < 15; i++) this.u32();
  }

  /** Uniform 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n), n up to 2^53 (two draws when n exceeds 2^32). */
  int(n: number): number {
    if (n <= 4294967296) return Math.floor(this.next() * n);
    return Math.floor(((this.u32() * 4294967296 + this.u32()) / 2 ** 64) * n);
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined && items.length === 0) throw new Error("pick from empty list");
    return item as T;
  }

  /** Fisher–Yates in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }
}
