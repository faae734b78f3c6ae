// The spec does not say whether startTime/endTime are inclusive. Ordinary windows do not need to
// know (they ask one millisecond wider and filter), but a single millisecond that must be split by
// filters needs a query that covers that millisecond and nothing else: a neighbour's burst would
// otherwise leak into every part. So, once per run, we measure the exchange's bounds on a bill we
// already hold: ask for exactly its millisecond under each hypothesis and see which returns it.
import type { Bill } from "../../exchange/bill-item.ts";
import type { BillsQuery } from "../../exchange/bills-endpoint.ts";
import type { ExactBounds, ExchangeProfile } from "../bills-core/exchange-profile.ts";
import type { FetchPage } from "./fetch-page.ts";

/**
 * Before the bounds are measured: one millisecond wider on each side, a superset of the range
 * under every inclusivity (the client drops what lies outside).
 */
export const PADDED: ExactBounds = { start: -1, end: 1 };

type Filters = Pick<BillsQuery, "coin" | "symbol" | "businessType">;

export function rangeQuery(
  fromMs: number,
  toMs: number,
  bounds: ExactBounds,
  limit: number,
  filters: Filters = {},
): BillsQuery {
  return { startTime: fromMs + bounds.start, endTime: toMs + bounds.end, limit, ...filters };
}

// Tightest hypothesis first: the first one that returns the sample bill is the exchange's rule
// (a looser one would also return it, a tighter one would not).
const HYPOTHESES: ExactBounds[] = [
  { start: 0, end: 0 },
  { start: 0, end: 1 },
  { start: -1, end: 0 },
  { start: -1, end: 1 },
];

/**
 * Measures the bounds with sample bills (filtered to their own businessType/coin/symbol so the page
 * is small). Returns undefined when no sample gives a clear answer; callers then fall back to the
 * padded query, which is never incomplete, only less precise.
 */
export async function measureExactBounds(
  fetchPage: FetchPage,
  samples: Bill[],
  profile: ExchangeProfile,
): Promise<ExactBounds | undefined> {
  for (const sample of samples.slice(0, 3)) {
    const filters = {
      businessType: sample.businessType,
      coin: sample.coin,
      ...(sample.symbol ? { symbol: sample.symbol } : {}),
    };
    let inconclusive = false;
    for (const h of HYPOTHESES) {
      const page = await fetchPage(rangeQuery(sample.cTimeMs, sample.cTimeMs, h, profile.limit, filters));
      if (page.bills.some((b) => b.billId === sample.billId)) {
        // Tighter hypotheses that came back full without the sample prove nothing: try another sample.
        if (inconclusive) break;
        return h;
      }
      if (profile.isFull(page)) inconclusive = true;
    }
  }
  return undefined;
}
