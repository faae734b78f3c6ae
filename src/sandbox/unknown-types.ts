// Switch `unknownTypes`: N generated bills carry a businessType outside spec 4.1 (real exchanges
// add types without notice). After generation, N bills are chosen with their own seeded stream
// (the history itself is unchanged otherwise: amounts, balances, ids, times): one inside a burst
// millisecond (> 100 bills) when bursts exist, the others one per equal slice of the history.
// Deposits (every coin's first bill is one), start/finish_liquidate (they delimit liquidations)
// and the unsplittable burst (150 bills of one type) are never chosen. Names go round-robin
// over UNKNOWN_BUSINESS_TYPES in time order.
import type { History } from "./history.ts";
import { Prng } from "./prng.ts";
import { anyTypeIndex, businessTypeIndex } from "./store.ts";
import { UNKNOWN_BUSINESS_TYPES } from "./types.ts";

const NEVER = new Set(["deposit", "start_liquidate", "finish_liquidate"].map((t) => businessTypeIndex(t) as number));

export function applyUnknownTypes(h: History, seed: number, n: number): void {
  if (n <= 0) return;
  const s = h.store;
  const rng = new Prng(seed, "unknown-types");
  const chosen = new Set<number>();
  const eligible = (i: number): boolean =>
    !chosen.has(i) && !NEVER.has(s.typeCodes[i] as number) && s.times[i] !== h.unsplittableMs;
  /** A random eligible position in [from, to), scanning on cyclically from a random start; -1 if none. */
  const pickIn = (from: number, to: number): number => {
    const len = to - from;
    if (len <= 0) return -1;
    const start = rng.int(len);
    for (let k = 0; k < len; k++) {
      const i = from + ((start + k) % len);
      if (eligible(i)) return i;
    }
    return -1;
  };
  if (h.burstTimes.length > 0) {
    const t = rng.pick(h.burstTimes);
    const i = pickIn(s.lowerBound(t), s.upperBound(t));
    if (i >= 0) chosen.add(i);
  }
  const slices = n - chosen.size;
  for (let k = 0; k < slices; k++) {
    let i = pickIn(Math.floor((k * s.length) / slices), Math.floor(((k + 1) * s.length) / slices));
    if (i < 0) i = pickIn(0, s.length);
    if (i < 0) throw new Error(`sandbox: unknownTypes ${n}: not enough bills that can take an unknown type`);
    chosen.add(i);
  }
  [...chosen]
    .sort((a, b) => a - b)
    .forEach((i, k) => {
      s.typeCodes[i] = anyTypeIndex(UNKNOWN_BUSINESS_TYPES[k % UNKNOWN_BUSINESS_TYPES.length] as string) as number;
    });
  s.version++;
}
