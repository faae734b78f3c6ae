// What one run of the bills stream reports, whichever source read the bills: the run record
// (sync_runs), the command's output and the logs are made from it. A v3 run leaves the v2 paging's
// fields (splits, hedges, calls-off) at zero.
import type { ExchangeFacts } from "../../store/exchange-profiles.ts";
import type { RunFigures } from "../../store/sync-runs.ts";

export interface BillsSyncSummary {
  fromMs: number;
  toMs: number;
  windows: number;
  requests: number;
  /** Millisecond splits performed (same-instant bursts larger than a page). */
  splitMilliseconds: number;
  /**
   * Milliseconds (epoch ms) whose split needed coin/symbol candidates: fetched as well as the API
   * allows, but completeness is not proven (see bills-v2/millisecond-split.ts). Empty when all is
   * proven.
   */
  unverifiedMilliseconds: number[];
  billsFetched: number;
  inserted: number;
  revised: number;
  quarantined: number;
  unknownBusinessTypes: string[];
  /**
   * Requests called off before their answer came: windows re-planned, and hedge races' losers
   * (bills-v2/window-pipeline.ts).
   */
  requestsCalledOff: number;
  /** Second requests sent for a slow head window (bills-v2/window-pipeline.ts hedging). */
  requestsHedged: number;
  /** The exchange's hasNextPage was proven not to mean "more bills exist" (page-trust.ts). */
  hasNextPageDistrusted: boolean;
  /**
   * Where the run's bills begin when the exchange's history horizon cut its range (epoch ms):
   * earlier bills are not retrievable. null when no horizon cut it.
   */
  historyFromMs: number | null;
  /** What is known of the exchange at the end of the run (exchange-profile.ts). */
  exchange: ExchangeFacts;
  /**
   * Time spent waiting for the exchange (request, transfer, parse, validation), seconds, summed
   * over requests: with several in flight at once this exceeds the wall time.
   */
  fetchSeconds: number;
  /** Time spent in database writes, seconds (overlaps fetching: the next window is fetched meanwhile). */
  writeSeconds: number;
}

/** The counts the run record (sync_runs) keeps of a run, whichever source; each adds its own detail. */
export function runCounts(s: BillsSyncSummary): Omit<RunFigures, "detail"> {
  return {
    pages: s.requests,
    recordsFetched: s.billsFetched,
    recordsNew: s.inserted,
    recordsChanged: s.revised,
    quarantined: s.quarantined,
  };
}
