// One page request as the stream's parts make it (the stream's own fetch: counted, clipped to the
// exchange's limits and learnt from; see profiled-fetch.ts).
import type { BillsPage, BillsQuery } from "../../exchange/bills-endpoint.ts";

export type FetchPage = (query: BillsQuery) => Promise<BillsPage>;
