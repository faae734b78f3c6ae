// The bills stream through the v3 ledger endpoint, which pages by a cursor: a range of at most the
// endpoint's span (100 days, or less when the exchange says so) is read page after page until the
// exchange says it has no next page. No page has to be short to prove a window complete (v2's
// rule), so a backfill needs about one request per 100 bills.
//
// Durability: each page is one statement with its bills and, while the range is under way, the
// cursor after it (sync_state.resume); the bookmark moves to the range's end only with the range's
// last page. A crash resumes from the last committed page, not from the range's start.
import type { Logger } from "pino";
import { ExchangeTimeRangeRefusal } from "../../exchange/errors.ts";
import {
  INCOME_MAX_LIMIT,
  INCOME_MAX_SPAN_MS,
  type IncomeCursor,
  type IncomePage,
  type IncomeQuery,
} from "../../exchange/income-endpoint.ts";
import type { Bill, RejectedItem } from "../../exchange/bill-item.ts";
import type { BillsWindowResult } from "../../store/bills-window.ts";
import type { RangeLimits } from "../bills-core/range-limits.ts";
import { CursorGuard } from "./cursor-guard.ts";

/** Where a range under way resumes: stored with each page's bills. */
export interface IncomeResume {
  fromMs: number;
  toMs: number;
  nextKey: IncomeCursor;
}

export interface IncomePageWrite {
  bills: Bill[];
  rejected: RejectedItem[];
  /** The range's end once its last page is in; else null (the bookmark stays). */
  rangeDoneMs: number | null;
  /** The cursor to resume from; null once the range is done. */
  resume: IncomeResume | null;
  context: Record<string, unknown>;
}

export interface IncomeSyncDeps {
  fetchPage(q: IncomeQuery, signal?: AbortSignal): Promise<IncomePage>;
  commit(w: IncomePageWrite): Promise<BillsWindowResult>;
  /** What the exchange refuses (history horizon, span), shared with v2's learning. */
  limits: RangeLimits;
  logger: Logger;
  signal?: AbortSignal;
}

export interface IncomeSyncSummary {
  ranges: number;
  requests: number;
  billsFetched: number;
  inserted: number;
  revised: number;
  quarantined: number;
  unknownBusinessTypes: string[];
  /** Where the bills begin when the history horizon cut the range; null otherwise. */
  historyFromMs: number | null;
  fetchSeconds: number;
  writeSeconds: number;
}

/** Syncs [fromMs, toMs], first finishing `resume`'s range when one was under way. */
export async function syncIncome(
  range: { fromMs: number; toMs: number; resume?: IncomeResume | null },
  deps: IncomeSyncDeps,
): Promise<IncomeSyncSummary> {
  const s: IncomeSyncSummary = {
    ranges: 0,
    requests: 0,
    billsFetched: 0,
    inserted: 0,
    revised: 0,
    quarantined: 0,
    unknownBusinessTypes: [],
    historyFromMs: null,
    fetchSeconds: 0,
    writeSeconds: 0,
  };
  const unknown = new Set<string>();
  let start = range.fromMs;
  let resume = range.resume ?? null;
  if (resume && (resume.toMs < range.fromMs || resume.fromMs > range.toMs)) resume = null;
  while (start <= range.toMs || resume) {
    deps.signal?.throwIfAborted();
    let from = resume ? resume.fromMs : start;
    let to = resume ? resume.toMs : Math.min(range.toMs, from + maxSpanMs(deps.limits) - 1);
    const clipped = deps.limits.clip({ startTime: from, endTime: to, limit: INCOME_MAX_LIMIT }, Date.now());
    if (clipped === "beyond") {
      s.historyFromMs = deps.limits.retrievableFromMs(Date.now()) ?? null;
      await commitPage(deps, s, {
        bills: [],
        rejected: [],
        rangeDoneMs: to,
        resume: null,
        context: { fromMs: from, toMs: to, beyondHorizon: true },
      });
      start = to + 1;
      resume = null;
      continue;
    }
    if (clipped.startTime > from) {
      s.historyFromMs = clipped.startTime;
      from = clipped.startTime;
      resume = null;
      to = Math.min(to, from + maxSpanMs(deps.limits) - 1);
    }
    const done = await pageRange(deps, s, unknown, { fromMs: from, toMs: to }, resume?.nextKey);
    if (done === "refused") {
      resume = null;
      continue; // the limits learnt narrower or later ranges: plan this one again
    }
    s.ranges++;
    start = to + 1;
    resume = null;
  }
  s.unknownBusinessTypes = [...unknown];
  return s;
}

/** Widest range asked: the endpoint's 100 days, or less when the exchange's span says so. */
function maxSpanMs(limits: RangeLimits): number {
  return Math.min(INCOME_MAX_SPAN_MS, limits.maxWindowMs());
}

async function pageRange(
  deps: IncomeSyncDeps,
  s: IncomeSyncSummary,
  unknown: Set<string>,
  r: { fromMs: number; toMs: number },
  startKey: IncomeCursor | undefined,
): Promise<"done" | "refused"> {
  const guard = new CursorGuard(r, startKey);
  let nextKey = startKey;
  for (;;) {
    deps.signal?.throwIfAborted();
    const q: IncomeQuery = {
      startTime: r.fromMs,
      endTime: r.toMs,
      limit: INCOME_MAX_LIMIT,
      ...(nextKey ? { nextKey } : {}),
    };
    let page: IncomePage;
    const started = performance.now();
    try {
      s.requests++;
      page = await deps.fetchPage(q, deps.signal);
    } catch (err) {
      if (!(err instanceof ExchangeTimeRangeRefusal)) throw err;
      const learnt = await deps.limits.learn(q, err, async (probe) => {
        s.requests++;
        return deps.fetchPage({ startTime: probe.startTime, endTime: probe.endTime, limit: probe.limit }, deps.signal);
      });
      deps.logger.warn(
        { fromMs: r.fromMs, toMs: r.toMs, learnt, maxSpanMs: deps.limits.maxSpanMs, historyMs: deps.limits.historyMs },
        "the exchange refused the range: asking again within what it accepts",
      );
      return "refused";
    } finally {
      s.fetchSeconds += (performance.now() - started) / 1000;
    }
    guard.check(page);
    s.billsFetched += page.bills.length;
    for (const t of page.unknownBusinessTypes) unknown.add(t);
    const last = !page.hasNextPage;
    const resume = last ? null : { fromMs: r.fromMs, toMs: r.toMs, nextKey: page.nextKey! };
    await commitPage(deps, s, {
      bills: page.bills,
      rejected: page.rejected,
      rangeDoneMs: last ? r.toMs : null,
      resume,
      context: { fromMs: r.fromMs, toMs: r.toMs, source: "v3" },
    });
    if (last) return "done";
    nextKey = page.nextKey!;
  }
}

async function commitPage(deps: IncomeSyncDeps, s: IncomeSyncSummary, w: IncomePageWrite): Promise<void> {
  const started = performance.now();
  const r = await deps.commit(w);
  s.writeSeconds += (performance.now() - started) / 1000;
  s.inserted += r.inserted;
  s.revised += r.revised;
  s.quarantined += r.quarantined;
}
