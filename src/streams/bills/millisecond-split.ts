// A single millisecond with a full page (a funding settlement writes one bill per position at one
// instant) cannot be narrowed in time. It is split by the filters the API offers instead:
//   1. businessType: the spec lists every value, so these parts are a complete partition (values
//      outside the list that appear on a page are added);
//   2. coin, then symbol, within a part that is still full: candidates are every value seen in this
//      run plus every value already stored for the account (a funding bill's symbol was traded,
//      so stored, before). These values cannot be enumerated through the API, so this level
//      cannot PROVE completeness: a bill whose coin/symbol appears nowhere else, hidden behind a
//      full page, is invisible to every query. Such a millisecond is reported as unverified (the
//      sync summary, a warning, exit status), never passed off as complete.
// Every bill of a full parent page must reappear in one of its parts, else we fail. A part that no
// filter can split further also fails, naming the millisecond.
import { BUSINESS_TYPES } from "../../exchange/business-types.ts";
import type { BillsPage, BillsQuery } from "../../exchange/bills-endpoint.ts";
import type { KnownDimensions } from "../../store/known-dimensions.ts";
import { UnsplittableMillisecondError } from "./errors.ts";
import { PADDED, rangeQuery, type ExactBounds } from "./exact-bounds.ts";
import type { FetchPage } from "./fetch-window.ts";
import type { WindowItems } from "./page-items.ts";
import type { PageTrust } from "./page-trust.ts";

type Filters = Pick<BillsQuery, "coin" | "symbol" | "businessType">;

export interface SplitContext {
  fetchPage: FetchPage;
  limit: number;
  trust: PageTrust;
  knownDimensions: () => Promise<KnownDimensions>;
  /** The exchange's measured bound semantics (undefined: unknown, use the padded query). */
  exactBounds: (samples: BillsPage["bills"]) => Promise<ExactBounds | undefined>;
}

type Query = (filters: Filters) => BillsQuery;

export type SplitOutcome = "not-needed" | "verified" | "unverified";

/**
 * Fetches every bill of a millisecond whose page was full. "verified": split by businessType
 * alone (a complete partition); "unverified": coin/symbol candidates were needed (see above).
 */
export async function fetchFullMillisecond(ctx: SplitContext, items: WindowItems, firstPage: BillsPage): Promise<SplitOutcome> {
  const ms = items.fromMs;
  const bounds = await ctx.exactBounds(firstPage.bills);
  const query: Query = (f) => rangeQuery(ms, ms, bounds ?? PADDED, ctx.limit, f);
  let parentPage = firstPage;
  if (bounds) {
    // The padded page may have been full because of a neighbouring millisecond.
    parentPage = await ctx.fetchPage(query({}));
    items.add(parentPage);
    if (!ctx.trust.isFull(parentPage, ctx.limit)) return "not-needed";
  }
  const known = await ctx.knownDimensions();
  const types = [...new Set<string>([...BUSINESS_TYPES, ...firstPage.unknownBusinessTypes])];

  const bySymbol = (coinFilters: Filters, coinPage: BillsPage) => {
    const coin = coinFilters.coin!;
    const symbols = union(items.symbolsByCoin.get(coin) ?? [], known.symbolsByCoin.get(coin) ?? []).filter((s) => s !== "");
    return splitInto(ctx, query, items, coinPage, symbols.map((symbol) => ({ ...coinFilters, symbol })), async (f) => {
      throw new UnsplittableMillisecondError(ms, `more than ${ctx.limit} bills share businessType=${f.businessType}, coin=${f.coin}, symbol=${f.symbol}`);
    });
  };
  let verified = true;
  const byCoin = (typeFilters: Filters, typePage: BillsPage) => {
    verified = false;
    return splitInto(ctx, query, items, typePage, union(items.coins, known.coins).map((coin) => ({ ...typeFilters, coin })), bySymbol);
  };

  await splitInto(ctx, query, items, parentPage, types.map((businessType) => ({ businessType })), byCoin);
  return verified ? "verified" : "unverified";
}

/**
 * Fetches each part, recursing into full parts, and returns the ids of in-range bills that the
 * parts (and their sub-parts) returned. Every in-range bill of the parent page must be among them.
 */
async function splitInto(
  ctx: SplitContext,
  query: Query,
  items: WindowItems,
  parentPage: BillsPage,
  parts: Filters[],
  onFull: (filters: Filters, page: BillsPage) => Promise<Set<string>>,
): Promise<Set<string>> {
  const returned = new Set<string>();
  for (const filters of parts) {
    const page = await ctx.fetchPage(query(filters));
    for (const id of items.add(page)) returned.add(id);
    if (ctx.trust.isFull(page, ctx.limit)) for (const id of await onFull(filters, page)) returned.add(id);
  }
  const missing = parentPage.bills.find((b) => items.inRange(b.cTimeMs) && !returned.has(b.billId));
  if (missing) {
    throw new UnsplittableMillisecondError(
      items.fromMs,
      `bill ${missing.billId} (businessType=${missing.businessType}, coin=${missing.coin}, symbol=${JSON.stringify(missing.symbol)}) was not returned by any filtered query`,
    );
  }
  return returned;
}

function union(a: Iterable<string>, b: Iterable<string>): string[] {
  return [...new Set([...a, ...b])];
}
