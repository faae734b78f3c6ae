// The run's summary (bills-core/sync-summary.ts) as the v2 source keeps it: its counters start at
// zero and grow as windows are written (batch-write.ts) and milliseconds split
// (full-millisecond.ts); what the fetching parts counted is copied in when the run ends, failed
// or not, so the summary always says what the run did.
import { NO_FACTS } from "../../store/exchange-profiles.ts";
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import type { BillsSyncSummary } from "../bills-core/sync-summary.ts";
import type { ProfiledFetch } from "./profiled-fetch.ts";
import type { WindowPipeline } from "./window-pipeline.ts";

export function emptySummary(range: { fromMs: number; toMs: number }): BillsSyncSummary {
  return {
    fromMs: range.fromMs,
    toMs: range.toMs,
    windows: 0,
    requests: 0,
    splitMilliseconds: 0,
    unverifiedMilliseconds: [],
    billsFetched: 0,
    inserted: 0,
    revised: 0,
    quarantined: 0,
    unknownBusinessTypes: [],
    requestsCalledOff: 0,
    requestsHedged: 0,
    hasNextPageDistrusted: false,
    historyFromMs: null,
    exchange: NO_FACTS,
    fetchSeconds: 0,
    writeSeconds: 0,
  };
}

/** Copies in what the run's requests and the profile counted and learnt. */
export function closeSummary(
  summary: BillsSyncSummary,
  run: { pipeline: WindowPipeline; profile: ExchangeProfile; queries: ProfiledFetch },
): void {
  summary.requestsCalledOff = run.pipeline.calledOff;
  summary.requestsHedged = run.pipeline.hedges;
  summary.hasNextPageDistrusted = run.profile.trust.hasNextPageDistrusted;
  summary.exchange = run.profile.facts();
  summary.requests = run.queries.requests;
  summary.fetchSeconds = run.queries.fetchSeconds;
  summary.historyFromMs = run.queries.historyFromMs;
  summary.unknownBusinessTypes = [...run.queries.unknownTypes];
}
