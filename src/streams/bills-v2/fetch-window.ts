// Fetches one time window and proves it complete, or reports that it was too full (or too wide).
//
// What the spec leaves open, and how this stays correct under every answer:
// - bound inclusivity: until it is measured (exact-bounds.ts), we ask one millisecond wider on each
//   side;
// - item ordering and which items a full page holds: never relied on. A window counts as complete
//   only when its page is not full (bills-core/page-trust.ts); a full page says nothing about what
//   it left out, so the caller narrows the window and asks again;
// - paging parameter: none is used; narrowing the window is the paging.
import type { BillsPage } from "../../exchange/bills-endpoint.ts";
import { PADDED, rangeQuery } from "./exact-bounds.ts";
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import type { FetchPage } from "./fetch-page.ts";
import { WindowItems } from "./page-items.ts";
import { WindowTooWide } from "./window-too-wide.ts";

export type WindowFetch =
  | { complete: true; items: WindowItems; tooWide?: undefined }
  | { complete: false; items: WindowItems; firstPage: BillsPage; tooWide?: undefined }
  /** Wider than the exchange accepts: narrow it (the limit is learnt by then). */
  | { complete: false; items: WindowItems; tooWide: true };

export async function fetchWindow(
  fetchPage: FetchPage,
  fromMs: number,
  toMs: number,
  profile: ExchangeProfile,
): Promise<WindowFetch> {
  const items = new WindowItems(fromMs, toMs);
  let page: BillsPage;
  try {
    page = await fetchPage(rangeQuery(fromMs, toMs, profile.bounds ?? PADDED, profile.limit));
  } catch (err) {
    if (err instanceof WindowTooWide) return { complete: false, items, tooWide: true };
    throw err;
  }
  items.add(page);
  return profile.isFull(page) ? { complete: false, items, firstPage: page } : { complete: true, items };
}
