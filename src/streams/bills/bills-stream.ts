// The bills stream (Singer-style): records = bills, replication key = creation time, bookmark =
// sync_state cursor. Walks forward in time window by window, several windows' requests in flight
// (window-pipeline.ts); windows are committed in time order with the cursor, in one statement each
// batch, so a crash at any point resumes exactly where it stopped.
import type { Logger } from "pino";
import type { BillsPage, BillsQuery } from "../../exchange/bills-endpoint.ts";
import type { BillsWindowResult, BillsWindowWrite } from "../../store/bills-window.ts";
import type { KnownDimensions } from "../../store/known-dimensions.ts";
import { fetchWindow } from "./fetch-window.ts";
import { PageTrust } from "./page-trust.ts";
import { measureExactBounds, PADDED, type ExactBounds } from "./exact-bounds.ts";
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
  commitWindow: (write: Omit<BillsWindowWrite, "accountName" | "stream">) => Promise<BillsWindowResult>;
  knownDimensions: () => Promise<KnownDimensions>;
  /**
   * True while the exchange's weight budget sets the pace: then one window is asked at a time,
   * since windows sent ahead are sized before the one in front is answered and, where the history
   * gets denser, come back full: requests spent for nothing, which is what the budget counts.
   */
  throttled?: () => boolean;
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
 * window or two (write-behind.ts). The scaling benchmark's 724 backfill jobs (one worker process)
 * took 2,280 statements before, 728 after; PostgreSQL CPU 19.4 -> 16.7 s.
 */
const MIN_BATCH_BILLS = 1000;
/** Windows held at most ahead of the commit (memory bound: a window is at most a page or a piece). */
const MAX_WINDOWS_AHEAD = 64;
/**
 * A head window still unanswered after max(100 ms, 4 x the median window's time) is asked again
 * (window-pipeline.ts). 4x the median is far outside normal variation (a loopback request takes
 * 10-25 ms, a remote one 100-300 ms), so it only fires on a stall or a retry's backoff; never while
 * the weight budget sets the pace, where a second request would only spend the budget.
 */
export const HEDGE = { minMs: 100, factor: 4 };

export async function syncBills(range: BillsRange, deps: BillsStreamDeps): Promise<BillsSyncSummary> {
  const summary: BillsSyncSummary = { fromMs: range.fromMs, toMs: range.toMs, windows: 0, requests: 0, splitMilliseconds: 0, unverifiedMilliseconds: [], billsFetched: 0, inserted: 0, revised: 0, quarantined: 0, unknownBusinessTypes: [], requestsCalledOff: 0, requestsHedged: 0, hasNextPageDistrusted: false, fetchSeconds: 0, writeSeconds: 0 };
  const concurrency = range.concurrency ?? DEFAULT_BILLS_CONCURRENCY;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) throw new Error(`bills stream: concurrency must be a positive integer, got ${concurrency}`);
  // Stops the other requests in flight when the run fails (and follows the caller's signal).
  const stop = new AbortController();
  const signal = deps.signal ? AbortSignal.any([deps.signal, stop.signal]) : stop.signal;
  const unknownTypes = new Set<string>();
  const trust = new PageTrust(({ itemCount, largestBefore }) => {
    summary.hasNextPageDistrusted = true;
    deps.logger.warn({ itemCount, largestBefore }, "the exchange sent hasNextPage: true on a page it did not fill (after serving a larger one): the field does not say whether more bills exist, so pages count as full by their item count alone for the rest of this run");
  });
  const fetchPage = async (q: BillsQuery, windowSignal?: AbortSignal) => {
    const s = windowSignal ? AbortSignal.any([signal, windowSignal]) : signal;
    s.throwIfAborted();
    summary.requests++;
    const started = performance.now();
    const page = await deps.fetchPage(q, s);
    summary.fetchSeconds += (performance.now() - started) / 1000;
    for (const t of page.unknownBusinessTypes) unknownTypes.add(t);
    trust.observe(page);
    return page;
  };
  const sizer = new WindowSizer({ limit: range.limit, initialMs: range.initialWindowMs ?? HOUR, maxMs: range.maxWindowMs ?? 7 * 24 * HOUR });

  const writer = new WriteBehind(async (windows) => {
    const first = windows[0]!;
    const last = windows.at(-1)!;
    const started = performance.now();
    const r = await deps.commitWindow({
      cursorMs: last.toMs,
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
    const window = { from: first.fromMs, to: last.toMs, windows: windows.length };
    if (r.revised > 0) deps.logger.warn({ window, revised: r.revised }, "exchange changed known bills; previous versions kept in bill_revisions");
    deps.logger.debug({ window, inserted: r.inserted }, "windows committed");
  }, MAX_QUEUED_BILLS, MIN_BATCH_BILLS);
  let bounds: Promise<ExactBounds | undefined> | undefined;
  // Windows are asked for padded until the bounds are measured, exactly after: a padded window
  // right after a burst would otherwise carry the burst's bills and never come back under the limit.
  let windowBounds: ExactBounds = PADDED;
  const splitContext: SplitContext = {
    fetchPage,
    limit: range.limit,
    trust,
    exactBounds: (samples) => {
      // Measured once per run, on the first full millisecond.
      bounds ??= measureExactBounds(fetchPage, samples, range.limit).then((b) => {
        deps.logger.info({ bounds: b ?? "unknown: using padded queries" }, "measured the exchange's time-bound inclusivity");
        if (b) windowBounds = b;
        return b;
      });
      return bounds;
    },
    knownDimensions: async () => {
      await writer.flush(); // what is stored must include every window before this one
      return deps.knownDimensions();
    },
  };

  // Bill times are at least 1 ms (bill-item.ts refuses others), so a padded query never needs a
  // negative startTime, which an exchange might refuse.
  const pipeline = new WindowPipeline({
    fromMs: Math.max(1, range.fromMs),
    toMs: range.toMs,
    concurrency: () => (deps.throttled?.() ? 1 : concurrency),
    maxSlots: MAX_WINDOWS_AHEAD,
    widthMs: () => sizer.widthMs,
    fetch: (fromMs, toMs, windowSignal) => fetchWindow((q) => fetchPage(q, windowSignal), fromMs, toMs, range.limit, windowBounds, trust),
    ...(range.hedge === false ? {} : { hedge: { enabled: () => !deps.throttled?.(), ...(range.hedge ?? HEDGE) } }),
  });

  const commit = async (fromMs: number, toMs: number, items: WindowItems) => {
    const { bills, rejected } = items.result();
    summary.windows++;
    summary.billsFetched += bills.length;
    for (const r of rejected) deps.logger.warn({ window: { from: fromMs, to: toMs }, reason: r.reason }, "bill quarantined");
    await writer.push({ fromMs, toMs, bills, rejected });
    pipeline.shift();
    sizer.observe(bills.length + rejected.length, toMs - fromMs + 1);
  };

  try {
    while (!pipeline.finished) {
      const { fromMs: from, toMs: to, fetched } = await pipeline.head();
      if (fetched.complete) {
        await commit(from, to, fetched.items);
        continue;
      }
      if (to > from) {
        const inRange = fetched.firstPage.bills.filter((b) => b.cTimeMs >= from && b.cTimeMs <= to);
        sizer.shrink(from, to - from + 1, inRange.map((b) => b.cTimeMs));
        pipeline.retryHead();
        pipeline.recut(sizer.widthMs);
        continue;
      }
      const outcome = await fetchFullMillisecond(splitContext, fetched.items, fetched.firstPage);
      if (outcome !== "not-needed") {
        summary.splitMilliseconds++;
        deps.logger.info({ ms: from, at: new Date(from).toISOString() }, "more bills in one millisecond than a page holds: split by filters");
      }
      if (outcome === "unverified") {
        summary.unverifiedMilliseconds.push(from);
        deps.logger.warn(
          { ms: from, at: new Date(from).toISOString() },
          "more bills of one businessType and coin in one millisecond than a page holds: fetched by every known symbol, but the API cannot prove none is missing (balance continuity checks would show a gap)",
        );
      }
      await commit(from, to, fetched.items);
    }
    await writer.flush();
  } catch (err) {
    stop.abort(err);
    await pipeline.settle();
    await writer.settle();
    throw err;
  } finally {
    summary.requestsCalledOff = pipeline.calledOff;
    summary.requestsHedged = pipeline.hedges;
  }
  summary.unknownBusinessTypes = [...unknownTypes];
  return summary;
}
