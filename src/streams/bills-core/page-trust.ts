// What a page proves about the bills it left out, learnt from the pages the exchange serves.
//
// Page size: the exchange may serve fewer items than the `limit` asked (a cap), and may leave
// `hasNextPage` out. Whatever it serves, it serves at least as many items per page as the largest
// page seen, so a page smaller than that was not cut: it is complete. A page of that size (or of
// `limit`) may have been cut: it counts as full, and the window is narrowed or split.
//
// A page under MIN_PAGE_SIZE items is taken as complete before any larger page is seen: no exchange
// asked for up to 100 serves fewer (the exchange's newer ledger endpoint defaults to 20), and a
// one-bill account would otherwise never prove anything.
//
// hasNextPage: an honest `true` means the page was cut: it then holds as many items as the
// exchange serves per page, never fewer than a page it served earlier, and never none. So a `true`
// on an empty page, or on a page smaller than one already served, proves the field is not telling:
// from then on a page is full only by its count. `false` is never taken as proof of completeness.
import type { BillsPage } from "../../exchange/bills-endpoint.ts";
import type { ExchangeFacts } from "../../store/exchange-profiles.ts";

export interface LyingHasNextPage {
  /** Items on the page that proved it. */
  itemCount: number;
  /** The largest page served before it. */
  largestBefore: number;
}

type Known = Pick<ExchangeFacts, "pageSize" | "pageSizeCapped" | "hasNextPage">;

/** Items per page no exchange plausibly serves fewer of (see the top of this file). */
export const MIN_PAGE_SIZE = 10;

export class PageTrust {
  private largest: number;
  /**
   * Proven: more bills existed where a page of `largest` was served (bills-v2/page-size-probe.ts),
   * or stored so.
   */
  private capped: boolean;
  /** Said by a hasNextPage: true on a page of `largest`: believed while the field is trusted. */
  private cappedByHasNext = false;
  private distrusted: boolean;
  private hasNextSent = false;
  private hasNextOmitted = false;

  /** `onLie` is told once, at the page that proves hasNextPage lies. */
  constructor(
    private readonly limit: number,
    known: Known,
    private readonly onLie: (evidence: LyingHasNextPage) => void,
  ) {
    this.largest = Math.min(known.pageSize ?? 0, limit);
    this.capped = known.pageSizeCapped && this.largest > 0 && this.largest < limit;
    this.distrusted = known.hasNextPage === "distrusted";
  }

  /** Every page the exchange serves, as it arrives. */
  observe(page: BillsPage): void {
    if (page.hasNextPage === undefined) this.hasNextOmitted = true;
    else this.hasNextSent = true;
    if (!this.distrusted && page.hasNextPage === true && (page.itemCount === 0 || page.itemCount < this.largest)) {
      this.distrusted = true;
      this.cappedByHasNext = false;
      this.onLie({ itemCount: page.itemCount, largestBefore: this.largest });
    }
    if (page.itemCount > this.largest) {
      // A larger page than a supposed cap: there was none at that size.
      this.capped = false;
      this.cappedByHasNext = false;
      this.largest = Math.min(this.limit, page.itemCount);
    }
    // An honest "more exist" on a page below the limit: the exchange cuts pages at this size.
    if (!this.distrusted && page.hasNextPage === true && page.itemCount < this.limit && page.itemCount === this.largest)
      this.cappedByHasNext = true;
  }

  /** The page could have been cut: the window must be narrowed or split to see what it left out. */
  isFull(page: BillsPage): boolean {
    if (page.itemCount === 0) return false;
    return page.itemCount >= this.pageSize || (page.hasNextPage === true && !this.distrusted);
  }

  /** Items a page may hold and still be complete only if fewer: the largest served, at least MIN_PAGE_SIZE. */
  get pageSize(): number {
    return Math.max(this.largest, Math.min(this.limit, MIN_PAGE_SIZE));
  }

  /** Whether any page was served yet (this run or stored): the page size has a learnt lower bound. */
  get pageSizeLearnt(): boolean {
    return this.largest > 0;
  }

  /** Whether the page size is known to be at least `limit` or proven to be a cap below it. */
  get pageSizeSettled(): boolean {
    return this.largest >= this.limit || this.capped || this.cappedByHasNext;
  }

  /** More bills than a page of `pageSize` were proven to exist where one was served: a cap. */
  markCapped(): void {
    if (this.largest < this.limit) this.capped = true;
  }

  get hasNextPageDistrusted(): boolean {
    return this.distrusted;
  }

  facts(): Known {
    return {
      pageSize: this.largest > 0 ? this.largest : null,
      pageSizeCapped: this.capped || this.cappedByHasNext,
      hasNextPage: this.distrusted ? "distrusted" : this.hasNextSent ? "honest" : this.hasNextOmitted ? "absent" : null,
    };
  }
}
