// The parts of one run of the v2 source, put together before its first request: the exchange's
// profile, the window sizer, the page fetch, the pipeline of windows in flight, the write behind
// them, and the state the run keeps between windows. The stages (window-loop.ts and the files it
// calls) work on it; nothing here sends a request.
import type { Logger } from "pino";
import { NO_FACTS } from "../../store/exchange-profiles.ts";
import { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import type { BillsSyncSummary } from "../bills-core/sync-summary.ts";
import { batchWriter } from "./batch-write.ts";
import { NarrowingBudget } from "./head-narrowing.ts";
import type { SplitContext } from "./millisecond-split.ts";
import { RecentBills, type CapProof } from "./page-size-probe.ts";
import type { ProfiledFetch } from "./profiled-fetch.ts";
import { warnOfProfileLessons } from "./profile-warnings.ts";
import type { BillsRange, BillsStreamDeps } from "./run-options.ts";
import { emptySummary } from "./run-summary.ts";
import { splitContext } from "./split-context.ts";
import type { WindowPipeline } from "./window-pipeline.ts";
import { firstMs, runConcurrency, windowSizer } from "./window-plan.ts";
import { profiledFetch, windowPipeline } from "./window-requests.ts";
import type { WindowSizer } from "./window-sizer.ts";
import type { WriteBehind } from "./write-behind.ts";

export interface WindowRun {
  /** The first millisecond asked, and the last. */
  readonly fromMs: number;
  readonly toMs: number;
  readonly summary: BillsSyncSummary;
  readonly logger: Logger;
  /** Stops the other requests in flight when the run fails (and follows the caller's signal). */
  readonly stop: AbortController;
  readonly profile: ExchangeProfile;
  readonly sizer: WindowSizer;
  readonly queries: ProfiledFetch;
  readonly writer: WriteBehind;
  readonly split: SplitContext;
  readonly pipeline: WindowPipeline;
  readonly narrowing: NarrowingBudget;
  /** The latest complete windows' bills, which decide a page size (decidePageSize). */
  readonly recent: RecentBills;
  /** What can prove the exchange caps its pages, once the page size was probed. */
  capProof: CapProof | undefined;
}

export function startRun(range: BillsRange, deps: BillsStreamDeps): WindowRun {
  const summary = emptySummary(range);
  const concurrency = runConcurrency(range);
  const stop = new AbortController();
  const signal = deps.signal ? AbortSignal.any([deps.signal, stop.signal]) : stop.signal;
  const { logger } = deps;
  const profile = deps.profile ?? new ExchangeProfile(range.limit, NO_FACTS);
  warnOfProfileLessons(profile, logger);
  const sizer = windowSizer(range, profile);
  const queries = profiledFetch({ profile, sizer, logger, signal }, deps);
  const writer = batchWriter(deps, summary);
  const split = splitContext({ profile, queries, writer }, deps);
  const fromMs = firstMs(range);
  const pipeline = windowPipeline({ fromMs, concurrency, profile, sizer, queries }, range, deps);
  const narrowing = new NarrowingBudget(profile, sizer);
  const recent = new RecentBills(range.limit);
  return {
    fromMs,
    toMs: range.toMs,
    summary,
    logger,
    stop,
    profile,
    sizer,
    queries,
    writer,
    split,
    pipeline,
    narrowing,
    recent,
    capProof: undefined,
  };
}
