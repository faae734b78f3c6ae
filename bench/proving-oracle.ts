// A yardstick for a pager that proves every window complete, as ledger-sync must (a window is complete only when its page is not full: the spec leaves the
// ordering and paging open). Even knowing the history's true average density, such a pager cannot
// know where the bills of the next window fall: a window aimed at fill f holds a random count.
// Aimed low, pages carry little; aimed high, more come back full, and a full page is a request that
// proves nothing. This oracle walks the real bill times in fixed windows sized for fill f at the
// true density; a window of 100 or more costs its full request plus ceil(count ÷ 99) parts cut
// exactly (which no real pager can do). The best f's count is the yardstick. It is not a strict
// floor: where the density varies, a pager that follows it locally (ledger-sync's sizer) can do a
// little better than fixed windows at the average.

const FILLS = [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];

export interface ProvingOracle {
  requests: number;
  fill: number;
}

/** `times`: every bill's creation time (ms), ascending; the history spans [fromMs, toMs]. */
export function provingOracle(times: readonly number[], fromMs: number, toMs: number, limit: number): ProvingOracle {
  const density = times.length / (toMs - fromMs + 1);
  let best: ProvingOracle = { requests: Infinity, fill: 0 };
  for (const fill of FILLS) {
    const width = (fill * limit) / density;
    let requests = 0;
    let i = 0;
    for (let start = fromMs; start <= toMs; start += width) {
      let count = 0;
      while (i < times.length && times[i]! < start + width) {
        count++;
        i++;
      }
      requests += count >= limit ? 1 + Math.ceil(count / (limit - 1)) : 1;
    }
    if (requests < best.requests) best = { requests, fill };
  }
  return best;
}
