// Wires the bills stream's v2 source (the bills endpoint, paged by time windows) to the exchange
// client and the store for one account. The entry (../bills/index.ts) plans the run and picks the
// source; the v3 source (../bills-v3) writes the same rows, bookmarks, run records and exchange
// facts, so an account can switch source and back.
import type { Logger } from "pino";
import { BILLS_MAX_LIMIT, fetchBillsPage } from "../../exchange/bills-endpoint.ts";
import { countBills } from "../../store/backfill-progress.ts";
import { commitBillsWindow } from "../../store/bills-window.ts";
import { readKnownDimensions } from "../../store/known-dimensions.ts";
import type { Db } from "../../store/prisma.ts";
import { recordRun, type RunFigures, type RunOutcome } from "../../store/sync-runs.ts";
import { loadExchangeProfile, type BillsAccountSync, type BillsRunPlan } from "../bills-core/account-sync.ts";
import { BILLS_STREAM } from "../bills-core/stream-name.ts";
import { runCounts, type BillsSyncSummary } from "../bills-core/sync-summary.ts";
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import { syncBills, type BillsStreamDeps } from "./bills-stream.ts";
import { widthForDensity } from "./window-sizer.ts";

/**
 * Same contract as syncAccountIncome (v3). `cursorMs`: the bookmark as the entry read it;
 * `backfillWindow`: the run is a backfill window's, resuming from its own bookmark.
 */
export async function syncAccountBillsV2(
  o: BillsAccountSync,
  plan: BillsRunPlan & { cursorMs: number | undefined; backfillWindow: boolean },
): Promise<BillsSyncSummary> {
  const { fromMs, toMs, cursorStream, runStream, cursorMs: cursor } = plan;
  const limit = o.limit ?? BILLS_MAX_LIMIT;
  const initialWindowMs = plan.backfillWindow
    ? await backfillWindowStart(o.db, o.accountName, fromMs, toMs, limit)
    : undefined;
  const logger = o.logger.child({ account: o.accountName, stream: runStream });
  const { profile, save: saveProfile } = await loadExchangeProfile(o, limit);
  logger.info(
    { fromMs, toMs, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), cursorMs: cursor ?? null },
    "bills sync starting",
  );
  const summary = await recordRun(
    o.db,
    { accountName: o.accountName, stream: runStream, windowFromMs: fromMs, windowToMs: toMs },
    () =>
      syncBills(
        { fromMs, toMs, limit, ...(initialWindowMs === undefined ? {} : { initialWindowMs }) },
        storeDeps(o, { cursorStream, cursorMs: cursor, profile, logger }),
      ),
    runFigures,
    () => o.signal?.aborted === true,
    o.openedRun,
  ).finally(saveProfile);
  warnOfHistoryHorizon(logger, summary, fromMs, toMs);
  logger.info(summary, "bills sync finished");
  return summary;
}

/** The v2 stream's dependencies for one account: the exchange client and the store. */
function storeDeps(
  o: BillsAccountSync,
  run: { cursorStream: string | null; cursorMs: number | undefined; profile: ExchangeProfile; logger: Logger },
): BillsStreamDeps {
  const { cursorStream, profile } = run;
  // The incremental cursor says every bill up to it is stored. Windows are proven on the time the
  // exchange filters on, which may lie up to filterOffsetMs after a bill's own: the cursor stays
  // that much behind, so the next run reads that edge again. (A backfill window's bookmark marks
  // the window's progress, not the books', and is left as is.)
  const incrementalCursor = (windowEndMs: number) =>
    cursorStream === BILLS_STREAM ? windowEndMs - profile.filterOffsetMs : windowEndMs;
  return {
    fetchPage: (q, signal) => fetchBillsPage(o.client, q, signal ?? o.signal),
    commitWindows: (w) =>
      commitBillsWindow(o.db, {
        ...(o.fence ? { fence: o.fence } : {}),
        ...w,
        cursorMs: incrementalCursor(w.cursorMs),
        accountName: o.accountName,
        stream: BILLS_STREAM,
        cursorStream,
      }),
    knownDimensions: () => readKnownDimensions(o.db, o.accountName),
    throttled: () => o.client.recentlyThrottled(),
    profile,
    // Lateness is what an incremental run measures: not on a first run, a backfill or a repair.
    ...(o.onLateness && cursorStream === BILLS_STREAM && run.cursorMs !== undefined
      ? { onInserted: o.onLateness }
      : {}),
    logger: run.logger,
    signal: o.signal,
  };
}

/** What the run record (sync_runs) keeps of a v2 run's summary. */
function runFigures(s: BillsSyncSummary): RunFigures & { outcome: RunOutcome } {
  return {
    outcome: s.unverifiedMilliseconds.length > 0 ? "unverified" : "ok",
    ...runCounts(s),
    detail: {
      windows: s.windows,
      splitMilliseconds: s.splitMilliseconds,
      unverifiedMilliseconds: s.unverifiedMilliseconds,
      unknownBusinessTypes: s.unknownBusinessTypes,
      historyFromMs: s.historyFromMs,
      exchange: s.exchange,
    },
  };
}

/** Bills before the exchange's history horizon cannot be read: the run says how much of its range that cut. */
function warnOfHistoryHorizon(logger: Logger, summary: BillsSyncSummary, fromMs: number, toMs: number): void {
  if (summary.historyFromMs === null) return;
  logger.warn(
    {
      historyFromMs: summary.historyFromMs,
      historyFrom: new Date(summary.historyFromMs).toISOString(),
      askedFrom: new Date(fromMs).toISOString(),
    },
    summary.historyFromMs > toMs
      ? "the whole range lies before the exchange's history horizon: none of it is retrievable"
      : "the exchange keeps history only from historyFrom: earlier bills of this range are not retrievable",
  );
}

/**
 * The first width for a backfill window, from the density of the span just before it (stored
 * already: an account's windows run in time order): every window is a job whose stream starts
 * afresh, and regrowing from the default hour step by step would cost each window several requests
 * and write statements (docs/design/window-sizing.md). With nothing stored before, the whole
 * window (no density: Infinity, capped at the span): often under a page, and a full page narrows
 * it in one step.
 */
async function backfillWindowStart(
  db: Db,
  account: string,
  fromMs: number,
  toMs: number,
  limit: number,
): Promise<number> {
  const span = toMs - fromMs + 1;
  const before = await countBills(db, account, Math.max(0, fromMs - span), fromMs - 1);
  return Math.max(1, Math.min(span, Math.floor(widthForDensity(before, span, limit))));
}
