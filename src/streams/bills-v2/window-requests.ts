// How the run's windows are requested: every request goes through the profiled fetch (clipped to
// the exchange's limits, counted, learnt from, and teaching the sizer), and several windows are in
// flight at once, taken back in time order, a slow head asked again (window-pipeline.ts).
import type { Logger } from "pino";
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import { fetchWindow } from "./fetch-window.ts";
import { ProfiledFetch } from "./profiled-fetch.ts";
import type { BillsRange, BillsStreamDeps } from "./run-options.ts";
import { WindowPipeline } from "./window-pipeline.ts";
import type { WindowSizer } from "./window-sizer.ts";

/** Windows held at most ahead of the commit (memory bound: a window is at most a page or a piece). */
const MAX_WINDOWS_AHEAD = 64;
/**
 * A head window still unanswered after max(100 ms, 4 x the median window's time) is asked again
 * (window-pipeline.ts). 4x the median is far outside the normal variation of a request's time, so
 * it only fires on a stall or a retry's backoff; never while the weight budget sets the pace, where
 * a second request would only spend the budget. See docs/design/requests-in-flight.md.
 */
export const HEDGE = { minMs: 100, factor: 4 };

/** The run's page fetch: what a refusal or a page teaches narrows the sizer's windows to it. */
export function profiledFetch(
  o: { profile: ExchangeProfile; sizer: WindowSizer; logger: Logger; signal: AbortSignal },
  deps: BillsStreamDeps,
): ProfiledFetch {
  const { profile, sizer } = o;
  return new ProfiledFetch({
    profile,
    fetchPage: deps.fetchPage,
    signal: o.signal,
    logger: o.logger,
    onLimitsLearnt: () => sizer.limitWidth(profile.limits.maxWindowMs()),
    onPage: () => sizer.setPageSize(profile.trust.pageSize),
  });
}

/**
 * The windows of [fromMs, range.toMs], `concurrency` in flight at once, one while the weight budget
 * sets the pace (when hedging is off too: a second request would only spend the budget).
 */
export function windowPipeline(
  o: { fromMs: number; concurrency: number; profile: ExchangeProfile; sizer: WindowSizer; queries: ProfiledFetch },
  range: BillsRange,
  deps: BillsStreamDeps,
): WindowPipeline {
  const { profile, sizer, concurrency } = o;
  const fetchPage = o.queries.fetchPage;
  return new WindowPipeline({
    fromMs: o.fromMs,
    toMs: range.toMs,
    concurrency: () => (deps.throttled?.() ? 1 : concurrency),
    maxSlots: MAX_WINDOWS_AHEAD,
    widthMs: () => sizer.widthMs,
    // Windows are asked for padded until the bounds are measured, exactly after: a padded window
    // right after a burst would otherwise carry the burst's bills and never come back under the limit.
    fetch: (from, to, windowSignal) => fetchWindow((q) => fetchPage(q, windowSignal), from, to, profile),
    ...(range.hedge === false ? {} : { hedge: { enabled: () => !deps.throttled?.(), ...(range.hedge ?? HEDGE) } }),
  });
}
