// How far back and how wide the exchange lets a query reach, learnt from its -1170 refusals
// ("startTime must be within the last N days. Time range cannot exceed M days") or set up front
// (EXCHANGE_HISTORY_DAYS, EXCHANGE_MAX_SPAN_MS).
//
// The message names both limits whichever one was broken, and a gateway may word it otherwise, so
// a figure is believed only where it explains the refusal (the span asked was wider than M, or the
// start older than N days). A refusal the message does not explain is told apart by one narrow
// query at the same start: refused too means the start is too old (the horizon is then found by
// bisection), accepted means the range was too wide (the span is halved). Every refusal teaches a
// strictly tighter limit, and the run fails by name after MAX_REFUSALS, so this never loops.
import type { BillsQuery } from "../../exchange/bills-endpoint.ts";
import { ExchangeTimeRangeRefusal } from "../../exchange/errors.ts";
import { RangeRefusedError } from "./errors.ts";

const DAY_MS = 86_400_000;

/** A number of days (the exchange's unit for its limits) in whole milliseconds. */
export const daysToMs = (days: number): number => Math.floor(days * DAY_MS);
/**
 * Queries start this much after the computed horizon: the exchange's clock and the time our
 * request takes to reach it would otherwise make a query at the exact horizon "too old".
 */
export const HORIZON_MARGIN_MS = 5_000;
/** Time-range refusals one run accepts before failing: each one narrows a limit. */
const MAX_REFUSALS = 64;
/** Bisecting an unexplained horizon stops at this precision. */
const HORIZON_PRECISION_MS = 1_000;
/** Narrowest span a query needs (a padded single millisecond: endTime − startTime = 2). */
const MIN_SPAN_MS = 2;

export type Send = (q: BillsQuery) => Promise<unknown>;

export class RangeLimits {
  private refusals = 0;

  constructor(
    /** Widest endTime − startTime accepted, ms (null: unknown). */
    public maxSpanMs: number | null,
    /** How far back the exchange serves, ms before now (null: no limit seen). */
    public historyMs: number | null,
  ) {}

  /** The earliest startTime to ask at `nowMs` (undefined: no horizon). */
  retrievableFromMs(nowMs: number): number | undefined {
    return this.historyMs === null ? undefined : nowMs - this.historyMs + HORIZON_MARGIN_MS;
  }

  /** Widest window [from, to] whose padded query fits the span (to − from + 2 <= maxSpan). */
  maxWindowMs(): number {
    return this.maxSpanMs === null ? Infinity : Math.max(1, this.maxSpanMs - 2);
  }

  tooWide(q: BillsQuery): boolean {
    return this.maxSpanMs !== null && q.endTime - q.startTime > this.maxSpanMs;
  }

  /** The query moved past the horizon, or "beyond" when all of it lies before the horizon. */
  clip(q: BillsQuery, nowMs: number): BillsQuery | "beyond" {
    const from = this.retrievableFromMs(nowMs);
    if (from === undefined || q.startTime >= from) return q;
    return q.endTime < from ? "beyond" : { ...q, startTime: from };
  }

  /**
   * Learns from a time-range refusal of `q`: "narrower" when the span was too wide (windows must
   * be narrowed), "later" when the start was too old (queries are clipped from now on).
   * `send` asks one query (for the checks described at the top of this file).
   */
  async learn(q: BillsQuery, refusal: ExchangeTimeRangeRefusal, send: Send): Promise<"narrower" | "later"> {
    if (++this.refusals > MAX_REFUSALS)
      throw new RangeRefusedError(refusal, `${MAX_REFUSALS} time ranges refused in one run`);
    const span = q.endTime - q.startTime;
    const now = Date.now();
    const statedSpan = refusal.maxSpanDays === undefined ? undefined : daysToMs(refusal.maxSpanDays);
    if (statedSpan !== undefined && span > statedSpan && statedSpan < (this.maxSpanMs ?? Infinity))
      return this.narrowTo(statedSpan, refusal);
    const statedHistory = refusal.historyDays === undefined ? undefined : daysToMs(refusal.historyDays);
    if (
      statedHistory !== undefined &&
      q.startTime < now - statedHistory + HORIZON_MARGIN_MS &&
      statedHistory < (this.historyMs ?? Infinity)
    ) {
      this.historyMs = statedHistory;
      return "later";
    }
    // Unexplained by the message: is it the start's age or the range's width?
    if (span > MIN_SPAN_MS && (await accepted(send, { ...q, endTime: q.startTime + MIN_SPAN_MS })))
      return this.narrowTo(Math.floor(span / 2), refusal);
    this.historyMs = now - (await this.bisectHorizon(q, refusal, send));
    return "later";
  }

  private narrowTo(spanMs: number, refusal: ExchangeTimeRangeRefusal): "narrower" {
    if (spanMs < MIN_SPAN_MS)
      throw new RangeRefusedError(refusal, `the exchange refuses even a ${MIN_SPAN_MS} ms range`);
    this.maxSpanMs = spanMs;
    return "narrower";
  }

  /** The earliest start (to HORIZON_PRECISION_MS) that the exchange accepts: lo refused, hi accepted. */
  private async bisectHorizon(q: BillsQuery, refusal: ExchangeTimeRangeRefusal, send: Send): Promise<number> {
    const probe = (start: number): BillsQuery => ({ startTime: start, endTime: start + MIN_SPAN_MS, limit: 1 });
    let lo = q.startTime;
    let hi = Date.now() - 60_000;
    if (hi <= lo || !(await accepted(send, probe(hi))))
      throw new RangeRefusedError(
        refusal,
        "a query starting a minute ago is refused too, so it is not the range asked",
      );
    while (hi - lo > HORIZON_PRECISION_MS) {
      const mid = Math.floor((lo + hi) / 2);
      if (await accepted(send, probe(mid))) hi = mid;
      else lo = mid;
    }
    return hi;
  }
}

/** Whether the exchange answers `q` (false: refused as a time range; other failures propagate). */
async function accepted(send: Send, q: BillsQuery): Promise<boolean> {
  try {
    await send(q);
    return true;
  } catch (err) {
    if (err instanceof ExchangeTimeRangeRefusal) return false;
    throw err;
  }
}
