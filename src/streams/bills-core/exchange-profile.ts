// Everything the bills stream knows about how this exchange serves an account's bills, in one
// place: what a page proves (page-trust.ts), how far back and how wide a query may reach
// (range-limits.ts), how far returned times may lie outside the range asked, and the bound
// inclusivity (measured by the v2 source: bills-v2/exact-bounds.ts). It starts from what earlier
// runs learnt (stored per account, store/exchange-profiles.ts) and what the user set, and is
// stored again after every run.
import type { BillsPage, BillsQuery } from "../../exchange/bills-endpoint.ts";
import type { ExchangeFacts } from "../../store/exchange-profiles.ts";
import { TimeFilterIgnoredError } from "./errors.ts";
import { PageTrust, type LyingHasNextPage } from "./page-trust.ts";
import { daysToMs, RangeLimits } from "./range-limits.ts";

/**
 * A returned bill this far outside the range asked means the exchange does not filter on time.
 * Exchanges that filter on a time of their own (an index time a little after the bill's) return
 * bills a few seconds out; no plausible lag is a minute.
 */
export const FILTER_IGNORED_MS = 60_000;

/** How to ask for the closed range [from, to]: startTime = from + start, endTime = to + end. */
export interface ExactBounds {
  start: 0 | -1;
  end: 0 | 1;
}

/** What the user set up front (EXCHANGE_MAX_SPAN_MS, EXCHANGE_HISTORY_DAYS). */
export interface ExchangeLimitsSetting {
  maxSpanMs?: number;
  historyDays?: number;
}

export interface ProfileEvents {
  /** hasNextPage proved to lie (told once). */
  onHasNextPageLie?: (evidence: LyingHasNextPage) => void;
  /** A bill came back outside the range asked by more than any before. */
  onFilterOffset?: (offsetMs: number, billId: string) => void;
}

export class ExchangeProfile {
  readonly trust: PageTrust;
  readonly limits: RangeLimits;
  private offsetMs: number;
  private measured: ExactBounds | undefined;

  constructor(
    readonly limit: number,
    known: ExchangeFacts,
    setting: ExchangeLimitsSetting = {},
    /** Told as things are learnt (the stream logs them). */
    readonly events: ProfileEvents = {},
  ) {
    this.trust = new PageTrust(limit, known, (e) => this.events.onHasNextPageLie?.(e));
    const setHistory = setting.historyDays === undefined ? null : daysToMs(setting.historyDays);
    this.limits = new RangeLimits(
      smaller(known.maxSpanMs, setting.maxSpanMs ?? null),
      smaller(known.historyMs, setHistory),
    );
    this.offsetMs = known.filterOffsetMs;
    if (known.startInclusive !== null && known.endInclusive !== null)
      this.measured = { start: known.startInclusive ? 0 : -1, end: known.endInclusive ? 0 : 1 };
  }

  /** Every page served, with the query it answers. Throws when the time filter was plainly ignored. */
  observe(page: BillsPage, q: BillsQuery): void {
    this.trust.observe(page);
    for (const b of page.bills) {
      const offset = Math.max(q.startTime - b.cTimeMs, b.cTimeMs - q.endTime, 0);
      if (offset <= this.offsetMs) continue;
      if (offset > FILTER_IGNORED_MS) throw new TimeFilterIgnoredError(b.billId, offset, q);
      this.offsetMs = offset;
      this.measured = undefined;
      this.events.onFilterOffset?.(offset, b.billId);
    }
  }

  isFull(page: BillsPage): boolean {
    return this.trust.isFull(page);
  }

  /** Largest distance of a returned bill's time outside the range asked (0: none seen). */
  get filterOffsetMs(): number {
    return this.offsetMs;
  }

  /**
   * The measured bound inclusivity, used to ask for exactly one millisecond. Not kept where
   * returned times lie outside the range asked: the measurement reads a bill's time as the time
   * the exchange filters on, which is then not so.
   */
  get bounds(): ExactBounds | undefined {
    return this.offsetMs > 0 ? undefined : this.measured;
  }

  set bounds(b: ExactBounds | undefined) {
    if (this.offsetMs === 0) this.measured = b;
  }

  facts(): ExchangeFacts {
    const bounds = this.bounds;
    return {
      ...this.trust.facts(),
      maxSpanMs: this.limits.maxSpanMs,
      historyMs: this.limits.historyMs,
      filterOffsetMs: this.offsetMs,
      startInclusive: bounds ? bounds.start === 0 : null,
      endInclusive: bounds ? bounds.end === 0 : null,
    };
  }
}

function smaller(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}
