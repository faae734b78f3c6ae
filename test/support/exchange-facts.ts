// Every exchange fact learnt, at values a real exchange might have: one fixture for the tests of
// what status, metrics and the store show.
import type { ExchangeFacts } from "../../src/store/exchange-profiles.ts";

export const LEARNT_FACTS: ExchangeFacts = {
  pageSize: 50,
  pageSizeCapped: true,
  maxSpanMs: 172_800_000,
  historyMs: 90 * 86_400_000,
  filterOffsetMs: 3_000,
  startInclusive: true,
  endInclusive: false,
  hasNextPage: "distrusted",
};
