// The window in front was not proven complete and is asked again narrower: when it was wider than
// the exchange accepts (narrowed to its limit) or came back full (narrowed from the bills the page
// showed). The windows behind it that are wider are re-planned too: they would most likely come
// back full as well. A window narrowed without end stops the run by name (NarrowingBudget).
import type { BillsPage } from "../../exchange/bills-endpoint.ts";
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import { WindowNotConvergingError } from "./errors.ts";
import type { WindowPipeline } from "./window-pipeline.ts";
import type { WindowSizer } from "./window-sizer.ts";

/**
 * Times the window in front may be narrowed before it is proven: halving a week to one millisecond
 * takes 30, and the narrowest step the sizer takes (to 7/8) about 150.
 */
const MAX_NARROWINGS = 200;

/** Counts the narrowings of the window in front since the last commit, up to MAX_NARROWINGS. */
export class NarrowingBudget {
  private narrowings = 0;

  constructor(
    private readonly profile: ExchangeProfile,
    private readonly sizer: WindowSizer,
  ) {}

  /** The window [from, to] in front is narrowed (`why`): throws past MAX_NARROWINGS. */
  narrowed(from: number, to: number, why: string): void {
    if (++this.narrowings > MAX_NARROWINGS) {
      throw new WindowNotConvergingError(
        from,
        to,
        this.narrowings - 1,
        `${why}; page size ${this.profile.trust.pageSize}, window width ${this.sizer.widthMs} ms, ` +
          `max window ${this.profile.limits.maxWindowMs()} ms`,
      );
    }
  }

  /** A window was committed: the next one in front starts afresh. */
  committed(): void {
    this.narrowings = 0;
  }
}

interface Head {
  narrowing: NarrowingBudget;
  profile: ExchangeProfile;
  sizer: WindowSizer;
  pipeline: WindowPipeline;
}

/** The window [from, to] was refused as wider than the exchange accepts (the limit is learnt by then). */
export function narrowTooWide(run: Head, from: number, to: number): void {
  run.narrowing.narrowed(from, to, "wider than the exchange accepts");
  run.sizer.limitWidth(run.profile.limits.maxWindowMs());
  run.pipeline.retryHead();
  run.pipeline.recut(run.sizer.widthMs);
}

/** The window [from, to], wider than a millisecond, came back full with `firstPage`. */
export function narrowFull(run: Head, from: number, to: number, firstPage: BillsPage): void {
  run.narrowing.narrowed(from, to, `a full page of ${firstPage.itemCount}`);
  const inRange = firstPage.bills.filter((b) => b.cTimeMs >= from && b.cTimeMs <= to);
  run.sizer.shrink(
    from,
    to - from + 1,
    inRange.map((b) => b.cTimeMs),
  );
  run.pipeline.retryHead();
  run.pipeline.recut(run.sizer.widthMs);
}
