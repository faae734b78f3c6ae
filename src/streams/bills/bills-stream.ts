// The bills stream (Singer-style): records = bills, replication key = creation time, bookmark =
// sync_state cursor. Walks forward in time window by window, several windows' requests in flight
// (window-pipeline.ts); windows are committed in time order with the cursor, in one statement each
// batch, so a crash at any point resumes exactly where it stopped.
import type { Logger } from "pino";
import type { BillsPage, BillsQuery } from "../../exchange/bills-endpoint.ts";
import { NO_FACTS, type ExchangeFacts } from "../../store/exchange-profiles.ts";
import type { BillsWindowResult, BillsWindowWrite } from "../../store/bills-window.ts";
import type { KnownDimensions } from "../../store/known-dimensions.ts";
import { ExchangeProfile } from "./exchange-profile.ts";
import { fetchWindow } from "./fetch-window.ts";
import { measureExactBounds } from "./exact-bounds.ts";
import { probePageSize, RecentBills, decidePageSize, type CapProof } from "./page-size-probe.ts";
import { WindowNotConvergingError } from "./errors.ts";
import { ProfiledFetch } from "./profiled-fetch.ts";
import { fetchFullMillisecond, type SplitContext } from "./millisecond-split.ts";
import type { WindowItems } from "./page-items.ts";
import { WindowPipeline } from "./window-pipeline.ts";
import { WindowSizer } from "./window-sizer.ts";
import { WriteBehind } from "./write-behind.ts";

export const BILLS_STREAM = "bills";

export interface BillsStreamDeps {
  /** One request; `signal` aborts it (the stream stops requests in flight when it fails). */
  fetchPage: (query: BillsQuery, signal?: AbortSignal) => Promise<BillsPage>;
  /** Stores one or more consecutive completed windows and the cursor, atomically. */
  commitWindows: (write: Omit<BillsWindowWrite, "accountName" | "stream">) => Promise<BillsWindowResult>;
  knownDimensions: () => Promise<KnownDimensions>;
  /**
   * True while the exchange's weight budget sets the pace: then one window is asked at a time,
   * since windows sent ahead are sized before the one in front is answered and, where the history
   * gets denser, come back full: requests spent for nothing, which is what the budget counts.
   */
  throttled?: () => boolean;
  /** What is known of the exchange before the run (default: nothing; learnt as the run goes). */
  profile?: ExchangeProfile;
  /** Told, per write, how long after its creation each new bill was first stored (ms). */
  onInserted?: (latenessMs: number[]) => void;
  logger: Logger;
  signal?: AbortSignal;
}

export interface BillsRange {
  fromMs: number;
  toMs: number;
  /** Page size to request (the spec's maximum, 100, unless a test says otherwise). */
  limit: number;
  initialWindowMs?: number;
  maxWindowMs?: number;
  /** Requests in flight at once (default DEFAULT_BILLS_CONCURRENCY). */
  concurrency?: number;
  /** When to ask a slow head window again (default HEDGE); false: never. */
  hedge?: false | { minMs: number; factor: number };
}

export interface BillsSyncSummary {
  fromMs: number;
  toMs: number;
  windows: number;
  requests: number;
  /** Millisecond splits performed (same-instant bursts larger than a page). */
  splitMilliseconds: number;
  /**
   * Milliseconds (epoch ms) whose split needed coin/symbol candidates: fetched as well as the API
   * allows, but completeness is not proven (see millisecond-split.ts). Empty when all is proven.
   */
  unverifiedMilliseconds: number[];
  billsFetched: number;
  inserted: number;
  revised: number;
  quarantined: number;
  unknownBusinessTypes: string[];
  /** Requests called off before their answer came: windows re-planned, and hedge races' losers (window-pipeline.ts). */
  requestsCalledOff: number;
  /** Second requests sent for a slow head window (window-pipeline.ts hedging). */
  requestsHedged: number;
  /** The exchange's hasNextPage was proven not to mean "more bills exist" (page-trust.ts). */
  hasNextPageDistrusted: boolean;
  /**
   * Where the run's bills begin when the exchange's history horizon cut its range (epoch ms):
   * earlier bills are not retrievable. null when no horizon cut it.
   */
  historyFromMs: number | null;
  /** What is known of the exchange at the end of the run (exchange-profile.ts). */
  exchange: ExchangeFacts;
  /**
   * Time spent waiting for the exchange (request, transfer, parse, validation), seconds, summed
   * over requests: with several in flight at once this exceeds the wall time.
   */
  fetchSeconds: number;
  /** Time spent in database writes, seconds (overlaps fetching: the next window is fetched meanwhile). */
  writeSeconds: number;
}

const HOUR = 3_600_000;

/** Requests in flight at once per stream run: hides the exchange's latency and retry waits. */
export const DEFAULT_BILLS_CONCURRENCY = 4;
/** Bills queued behind the write in flight before fetching waits (memory bound). */
const MAX_QUEUED_BILLS = 5000;
/**
 * Bills a write waits for (or the run's end): one statement per ~1,000 bills instead of one per
 * window or two (write-behind.ts; figures in docs/design/write-path.md).
 */
const MIN_BATCH_BILLS = 1000;
/**
 * A batch short of MIN_BATCH_BILLS is written after this long anyway: over sparse history a run
 * that fails later must still have moved the cursor past what it proved, not start again.
 */
const MAX_BATCH_DELAY_MS = 2_000;
/**
 * Times the window in front may be narrowed before it is proven: halving a week to one millisecond
 * takes 30, and the narrowest step the sizer takes (to 7/8) about 150.
 */
const MAX_NARROWINGS = 200;
/** Windows held at most ahead of the commit (memory bound: a window is at most a page or a piece). */
const MAX_WINDOWS_AHEAD = 64;
/**
 * A head window still unanswered after max(100 ms, 4 x the median window's time) is asked again
 * (window-pipeline.ts). 4x the median is far outside the normal variation of a request's time, so
 * it only fires on a stall or a retry's backoff; never while the weight budget sets the pace, where
 * a second request would only spend the budget. See docs/design/requests-in-flight.md.
 */
export const HEDGE = { minMs: 100, factor: 4 };

export async function syncBills(range: BillsRange, deps: BillsStreamDeps): Promise<BillsSyncSummary> {
  const summary: BillsSyncSummary = {
    fromMs: range.fromMs,
    toMs: range.toMs,
    windows: 0,
    requests: 0,
    splitMilliseconds: 0,
    unverifiedMilliseconds: [],
    billsFetched: 0,
    inserted: 0,
    revised: 0,
    quarantined: 0,
    unknownBusinessTypes: [],
    requestsCalledOff: 0,
    requestsHedged: 0,
    hasNextPageDistrusted: false,
    historyFromMs: null,
    exchange: NO_FACTS,
    fetchSeconds: 0,
    writeSeconds: 0,
  };
  const concurrency = range.concurrency ?? DEFAULT_BILLS_CONCURRENCY;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1)
    throw new Error(`bills stream: concurrency must be a positive integer, got ${concurrency}`);
  // Stops the other requests in flight when the run fails (and follows the caller's signal).
  const stop = new AbortController();
  const signal = deps.signal ? AbortSignal.any([deps.signal, stop.signal]) : stop.signal;
  const profile = deps.profile ?? new ExchangeProfile(range.limit, NO_FACTS);
  profile.events.onHasNextPageLie = ({ itemCount, largestBefore }) => {
    deps.logger.warn(
      { itemCount, largestBefore },
      "the exchange sent hasNextPage: true on a page it did not fill (after serving a larger one): " +
        "the field does not say whether more bills exist, so pages count as full by their item count alone",
    );
  };
  profile.events.onFilterOffset = (offsetMs, billId) => {
    deps.logger.warn(
      { offsetMs, billId },
      "the exchange returned a bill whose time lies outside the range asked: it filters on another time; " +
        "such bills are kept, and bound inclusivity is no longer relied on",
    );
  };
  const sizer = new WindowSizer({
    limit: range.limit,
    initialMs: range.initialWindowMs ?? HOUR,
    maxMs: Math.min(range.maxWindowMs ?? 7 * 24 * HOUR, profile.limits.maxWindowMs()),
  });

  const queries = new ProfiledFetch({
    profile,
    fetchPage: deps.fetchPage,
    signal,
    logger: deps.logger,
    onLimitsLearnt: () => sizer.limitWidth(profile.limits.maxWindowMs()),
    onPage: () => sizer.setPageSize(profile.trust.pageSize),
  });
  const fetchPage = queries.fetchPage;

  const writer = new WriteBehind(
    async (windows) => {
      const first = windows[0]!;
      const last = windows.at(-1)!;
      const started = performance.now();
      const r = await deps.commitWindows({
        cursorMs: last.toMs,
        // A bill near a window's edge can be in two windows of a batch (padded queries, or an
        // exchange filtering on another time): the write keeps the later one (bills-window.ts).
        bills: windows.flatMap((w) => w.bills),
        // One bad item can be in several windows of a batch (an undated one is kept wherever it is
        // listed): one statement cannot upsert its quarantine row twice.
        rejected: [...new Map(windows.flatMap((w) => w.rejected).map((r) => [r.rawText, r])).values()],
        context: { fromMs: first.fromMs, toMs: last.toMs },
      });
      summary.writeSeconds += (performance.now() - started) / 1000;
      summary.inserted += r.inserted;
      summary.revised += r.revised;
      summary.quarantined += r.quarantined;
      if (r.insertedLatenessMs.length > 0) deps.onInserted?.(r.insertedLatenessMs);
      const window = { from: first.fromMs, to: last.toMs, windows: windows.length };
      if (r.revised > 0)
        deps.logger.warn(
          { window, revised: r.revised },
          "exchange changed known bills; previous versions kept in bill_revisions",
        );
      deps.logger.debug({ window, inserted: r.inserted }, "windows committed");
    },
    MAX_QUEUED_BILLS,
    MIN_BATCH_BILLS,
    MAX_BATCH_DELAY_MS,
  );
  let bounds: Promise<void> | undefined;
  const splitContext: SplitContext = {
    fetchPage,
    profile,
    unknownTypes: () => queries.unknownTypes,
    exactBounds: async (samples) => {
      // Measured once (per account: it is kept), on the first full millisecond.
      if (profile.bounds === undefined && profile.filterOffsetMs === 0) {
        bounds ??= measureExactBounds(fetchPage, samples, profile).then((b) => {
          deps.logger.info(
            { bounds: b ?? "unknown: using padded queries" },
            "measured the exchange's time-bound inclusivity",
          );
          profile.bounds = b;
        });
        await bounds;
      }
      return profile.bounds;
    },
    knownDimensions: async () => {
      await writer.flush(); // what is stored must include every window before this one
      return deps.knownDimensions();
    },
  };

  // Bill times are at least 1 ms (bill-item.ts refuses others), so a padded query never needs a
  // negative startTime, which an exchange might refuse.
  const fromMs = Math.max(1, range.fromMs);
  const pipeline = new WindowPipeline({
    fromMs,
    toMs: range.toMs,
    concurrency: () => (deps.throttled?.() ? 1 : concurrency),
    maxSlots: MAX_WINDOWS_AHEAD,
    widthMs: () => sizer.widthMs,
    // Windows are asked for padded until the bounds are measured, exactly after: a padded window
    // right after a burst would otherwise carry the burst's bills and never come back under the limit.
    fetch: (from, to, windowSignal) => fetchWindow((q) => fetchPage(q, windowSignal), from, to, profile),
    ...(range.hedge === false ? {} : { hedge: { enabled: () => !deps.throttled?.(), ...(range.hedge ?? HEDGE) } }),
  });

  let capProof: CapProof | undefined;
  /** Times the window in front was narrowed since the last commit (MAX_NARROWINGS). */
  let narrowings = 0;
  const narrowed = (from: number, to: number, why: string) => {
    if (++narrowings > MAX_NARROWINGS) {
      throw new WindowNotConvergingError(
        from,
        to,
        narrowings - 1,
        `${why}; page size ${profile.trust.pageSize}, window width ${sizer.widthMs} ms, ` +
          `max window ${profile.limits.maxWindowMs()} ms`,
      );
    }
  };
  const recent = new RecentBills(range.limit);
  const commit = async (from: number, to: number, items: WindowItems) => {
    const { bills, rejected } = items.result();
    summary.windows++;
    summary.billsFetched += bills.length;
    for (const r of rejected) deps.logger.warn({ window: { from, to }, reason: r.reason }, "bill quarantined");
    await writer.push({ fromMs: from, toMs: to, bills, rejected });
    pipeline.shift();
    narrowings = 0;
    sizer.observe(bills.length + rejected.length, to - from + 1);
    const ids = bills.map((b) => b.billId);
    capProof?.windowComplete(from, to, ids);
    recent.add(from, ids);
  };

  try {
    // The probe's density sizes the first windows, unless the caller chose their width (a backfill
    // window starts from the density stored around it: a better guess than the newest span's).
    const seed = range.initialWindowMs === undefined ? (count: number, w: number) => sizer.seed(count, w) : undefined;
    capProof = await probePageSize(profile, (q) => fetchPage(q), fromMs, range.toMs, sizer.widthMs, seed);
    while (!pipeline.finished) {
      const { fromMs: from, toMs: to, fetched } = await pipeline.head();
      if (fetched.complete) {
        await commit(from, to, fetched.items);
        continue;
      }
      if (fetched.tooWide) {
        narrowed(from, to, "wider than the exchange accepts");
        sizer.limitWidth(profile.limits.maxWindowMs());
        pipeline.retryHead();
        pipeline.recut(sizer.widthMs);
        continue;
      }
      if (to > from) {
        narrowed(from, to, `a full page of ${fetched.firstPage.itemCount}`);
        const inRange = fetched.firstPage.bills.filter((b) => b.cTimeMs >= from && b.cTimeMs <= to);
        sizer.shrink(
          from,
          to - from + 1,
          inRange.map((b) => b.cTimeMs),
        );
        pipeline.retryHead();
        pipeline.recut(sizer.widthMs);
        continue;
      }
      if (!profile.trust.pageSizeSettled) {
        await decidePageSize(
          profile,
          (q) => fetchPage(q),
          from,
          recent,
          fetched.firstPage.bills.map((b) => b.billId),
        );
        if (!profile.isFull(fetched.firstPage)) {
          await commit(from, to, fetched.items);
          continue;
        }
      }
      const outcome = await fetchFullMillisecond(splitContext, fetched.items, fetched.firstPage);
      if (outcome !== "not-needed") {
        summary.splitMilliseconds++;
        deps.logger.info(
          { ms: from, at: new Date(from).toISOString() },
          "more bills in one millisecond than a page holds: split by filters",
        );
      }
      if (outcome === "unverified") {
        summary.unverifiedMilliseconds.push(from);
        deps.logger.warn(
          { ms: from, at: new Date(from).toISOString() },
          "more bills in one millisecond than a page holds, and the filters the API offers cannot prove none " +
            "is missing (a coin/symbol split, or a businessType the spec does not list is in play): " +
            "fetched as well as the API allows (balance continuity checks would show a gap)",
        );
      }
      await commit(from, to, fetched.items);
    }
    await writer.flush();
  } catch (err) {
    stop.abort(err);
    await pipeline.drain();
    await writer.drain();
    throw err;
  } finally {
    summary.requestsCalledOff = pipeline.calledOff;
    summary.requestsHedged = pipeline.hedges;
    summary.hasNextPageDistrusted = profile.trust.hasNextPageDistrusted;
    summary.exchange = profile.facts();
    summary.requests = queries.requests;
    summary.fetchSeconds = queries.fetchSeconds;
    summary.historyFromMs = queries.historyFromMs;
  }
  summary.unknownBusinessTypes = [...queries.unknownTypes];
  return summary;
}
