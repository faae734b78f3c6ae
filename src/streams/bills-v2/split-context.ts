// What splitting a full millisecond needs from the run (millisecond-split.ts): the run's page
// fetch, the exchange's bound inclusivity (measured once, on the first full millisecond), and the
// account's coins, symbols and business types as stored, which must include every window before.
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import { measureExactBounds } from "./exact-bounds.ts";
import type { SplitContext } from "./millisecond-split.ts";
import type { ProfiledFetch } from "./profiled-fetch.ts";
import type { BillsStreamDeps } from "./run-options.ts";
import type { WriteBehind } from "./write-behind.ts";

export function splitContext(
  o: { profile: ExchangeProfile; queries: ProfiledFetch; writer: WriteBehind },
  deps: BillsStreamDeps,
): SplitContext {
  const { profile, queries, writer } = o;
  const fetchPage = queries.fetchPage;
  let bounds: Promise<void> | undefined;
  return {
    fetchPage,
    profile,
    unknownTypes: () => queries.unknownTypes,
    exactBounds: async (samples) => {
      // Measured once (per account: it is kept), on the first full millisecond.
      if (profile.bounds === undefined && profile.filterOffsetMs === 0) {
        bounds ??= measureExactBounds(fetchPage, samples, profile).then((b) => {
          deps.logger.info(
            { bounds: b ?? "unknown: using padded queries" },
            "measured the exchange's time-bound inclusivity",
          );
          profile.bounds = b;
        });
        await bounds;
      }
      return profile.bounds;
    },
    knownDimensions: async () => {
      await writer.flush(); // what is stored must include every window before this one
      return deps.knownDimensions();
    },
  };
}
