// Fetches one time window and proves it complete, or reports that it was too full.
//
// What the spec leaves open, and how this stays correct under every answer:
// - bound inclusivity: until it is measured (exact-bounds.ts), we ask one millisecond wider on each
//   side and keep only [from, to];
// - item ordering and which items a full page holds: never relied on. A window counts as complete
//   only when its page is not full (fewer items than the limit and no trusted hasNextPage: true,
//   page-trust.ts); a full
//   page says nothing about what it left out, so the caller narrows the window and asks again;
// - paging parameter: none is used; narrowing the window is the paging.
import type { BillsPage, BillsQuery } from "../../exchange/bills-endpoint.ts";
import { rangeQuery, type ExactBounds } from "./exact-bounds.ts";
import { WindowItems } from "./page-items.ts";
import type { PageTrust } from "./page-trust.ts";

export type FetchPage = (query: BillsQuery) => Promise<BillsPage>;

export type WindowFetch =
  | { complete: true; items: WindowItems }
  | { complete: false; items: WindowItems; firstPage: BillsPage };

export async function fetchWindow(fetchPage: FetchPage, fromMs: number, toMs: number, limit: number, bounds: ExactBounds, trust: PageTrust): Promise<WindowFetch> {
  const items = new WindowItems(fromMs, toMs);
  const page = await fetchPage(rangeQuery(fromMs, toMs, bounds, limit));
  items.add(page);
  return trust.isFull(page, limit) ? { complete: false, items, firstPage: page } : { complete: true, items };
}
