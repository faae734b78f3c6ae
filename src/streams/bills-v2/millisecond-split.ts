// A single millisecond with a full page (a funding settlement writes one bill per position at one
// instant) cannot be narrowed in time. It is split by the filters the API offers instead:
//   1. businessType: the spec lists every value, so these parts are a complete partition. Values
//      outside the list, seen in the run or stored for the account, are added; but once one is in
//      play the list is plainly not the exchange's whole list, so the split cannot prove
//      completeness: the millisecond is reported unverified;
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
import type { ExactBounds, ExchangeProfile } from "../bills-core/exchange-profile.ts";
import { PADDED, rangeQuery } from "./exact-bounds.ts";
import type { FetchPage } from "./fetch-page.ts";
import type { WindowItems } from "./page-items.ts";

type Filters = Pick<BillsQuery, "coin" | "symbol" | "businessType">;

export interface SplitContext {
  fetchPage: FetchPage;
  profile: ExchangeProfile;
  /** businessType values outside the spec's list seen so far in the run. */
  unknownTypes: () => Iterable<string>;
  knownDimensions: () => Promise<KnownDimensions>;
  /** The exchange's measured bound semantics (undefined: unknown, use the padded query). */
  exactBounds: (samples: BillsPage["bills"]) => Promise<ExactBounds | undefined>;
}

type Query = (filters: Filters) => BillsQuery;

export type SplitOutcome = "not-needed" | "verified" | "unverified";

/**
 * Fetches every bill of a millisecond whose page was full. "verified": split by businessType
 * alone (a complete partition); "unverified": coin/symbol candidates were needed, or a
 * businessType outside the spec's list is in play (see above).
 */
export async function fetchFullMillisecond(
  ctx: SplitContext,
  items: WindowItems,
  firstPage: BillsPage,
): Promise<SplitOutcome> {
  const ms = items.fromMs;
  const bounds = await ctx.exactBounds(firstPage.bills);
  const limit = ctx.profile.limit;
  const query: Query = (f) => rangeQuery(ms, ms, bounds ?? PADDED, limit, f);
  let parentPage = firstPage;
  if (bounds) {
    // The padded page may have been full because of a neighbouring millisecond.
    parentPage = await ctx.fetchPage(query({}));
    items.add(parentPage);
    if (!ctx.profile.isFull(parentPage)) return "not-needed";
  }
  const known = await ctx.knownDimensions();
  const types = union(BUSINESS_TYPES, [
    ...firstPage.unknownBusinessTypes,
    ...ctx.unknownTypes(),
    ...known.businessTypes,
  ]);
  const specTypes = new Set<string>(BUSINESS_TYPES);

  const bySymbol = (coinFilters: Filters, coinPage: BillsPage) => {
    const coin = coinFilters.coin!;
    // Bills with no contract (symbol null) have no value to filter on: they are never among the candidates.
    const symbols = union(items.symbolsByCoin.get(coin) ?? [], known.symbolsByCoin.get(coin) ?? []);
    return splitInto(
      ctx,
      query,
      items,
      coinPage,
      symbols.map((symbol) => ({ ...coinFilters, symbol })),
      async (f, page) => {
        // A page below the limit, as large as any served: cut by a cap, or complete? Not provable
        // until the page size is settled (page-size-probe.ts): reported unverified, not refused.
        if (page.itemCount < limit && !ctx.profile.trust.pageSizeSettled) return new Set();
        throw new UnsplittableMillisecondError(
          ms,
          `more than ${ctx.profile.trust.pageSize} bills share ` +
            `businessType=${f.businessType}, coin=${f.coin}, symbol=${f.symbol}`,
        );
      },
    );
  };
  let verified = true;
  const byCoin = (typeFilters: Filters, typePage: BillsPage) => {
    verified = false;
    return splitInto(
      ctx,
      query,
      items,
      typePage,
      union(items.coins, known.coins).map((coin) => ({ ...typeFilters, coin })),
      bySymbol,
    );
  };

  await splitInto(
    ctx,
    query,
    items,
    parentPage,
    types.map((businessType) => ({ businessType })),
    byCoin,
  );
  return verified && types.every((t) => specTypes.has(t)) ? "verified" : "unverified";
}

/**
 * Fetches each part, recursing into full parts, and returns the ids of the bills that the parts
 * (and their sub-parts) returned. Every bill of the parent page must be among them: the parts ask
 * the parent's range, so they are the same bills however the exchange places them in time.
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
    if (ctx.profile.isFull(page)) for (const id of await onFull(filters, page)) returned.add(id);
  }
  const missing = parentPage.bills.find((b) => !returned.has(b.billId));
  if (missing) {
    throw new UnsplittableMillisecondError(
      items.fromMs,
      `bill ${missing.billId} (businessType=${missing.businessType}, coin=${missing.coin}, ` +
        `symbol=${JSON.stringify(missing.symbol)}) was not returned by any filtered query`,
    );
  }
  return returned;
}

function union(a: Iterable<string>, b: Iterable<string>): string[] {
  return [...new Set([...a, ...b])];
}
