// What a page's `hasNextPage` is worth on this exchange, learnt over one run. The spec shows the
// field only in a sample. An honest `true` means the page was cut: it then holds as many items as
// the exchange serves per page, never fewer than a page it served earlier, and never none. So a
// `true` on an empty page, or on a page smaller than one already served, proves the field is not
// telling: from then on, for the rest of the run, a page is full only by its count.
import type { BillsPage } from "../../exchange/bills-endpoint.ts";

export interface LyingHasNextPage {
  /** Items on the page that proved it. */
  itemCount: number;
  /** The largest page served before it. */
  largestBefore: number;
}

export class PageTrust {
  private largest = 0;
  private distrusted = false;

  /** `onLie` is told once, at the page that proves the field lies. */
  constructor(private readonly onLie: (evidence: LyingHasNextPage) => void) {}

  /** Every page the exchange serves in the run, as it arrives. */
  observe(page: BillsPage): void {
    if (!this.distrusted && page.hasNextPage === true && (page.itemCount === 0 || page.itemCount < this.largest)) {
      this.distrusted = true;
      this.onLie({ itemCount: page.itemCount, largestBefore: this.largest });
    }
    this.largest = Math.max(this.largest, page.itemCount);
  }

  /** Whether `hasNextPage` has been proven not to mean "more bills exist" in this run. */
  get hasNextPageDistrusted(): boolean {
    return this.distrusted;
  }

  /** A full page says nothing of what it left out: the window must be narrowed or split. */
  isFull(page: BillsPage, limit: number): boolean {
    return page.itemCount >= limit || (page.hasNextPage === true && !this.distrusted);
  }
}
