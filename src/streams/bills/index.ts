// Wires the bills stream to the exchange client and the store for one account.
import { BILLS_MAX_LIMIT, fetchBillsPage } from "../../exchange/bills-endpoint.ts";
import { countBills } from "../../store/backfill-progress.ts";
import { commitBillsWindow } from "../../store/bills-window.ts";
import { readCursor } from "../../store/cursors.ts";
import { saveExchangeFacts } from "../../store/exchange-profiles.ts";
import { readKnownDimensions } from "../../store/known-dimensions.ts";
import type { Db } from "../../store/prisma.ts";
import { recordRun } from "../../store/sync-runs.ts";
import { syncAccountIncome } from "../bills-v3/index.ts";
import { loadExchangeProfile, type BillsAccountSync } from "./account-sync.ts";
import { BILLS_STREAM, syncBills, type BillsSyncSummary } from "./bills-stream.ts";
import { widthForDensity } from "./window-sizer.ts";

export type { BillsAccountSync, BillsBookmark } from "./account-sync.ts";
export { BILLS_STREAM, type BillsSyncSummary } from "./bills-stream.ts";
export { RangeRefusedError, TimeFilterIgnoredError, UnsplittableMillisecondError } from "./errors.ts";
export type { ExchangeLimitsSetting } from "./exchange-profile.ts";

/** Incremental start: the cursor minus the lookback, or BACKFILL_FROM on the first run. */
export function incrementalStart(cursorMs: number | undefined, backfillFromMs: number, lookbackMs: number): number {
  return cursorMs === undefined ? backfillFromMs : Math.max(0, cursorMs + 1 - lookbackMs);
}

/** The stream name a run is recorded under in sync_runs. */
export const REPAIR_STREAM = "bills-repair";

export async function syncAccountBills(o: BillsAccountSync): Promise<BillsSyncSummary> {
  const b = o.bookmark;
  if (b !== undefined && (o.fromMs === undefined || o.untilMs === undefined))
    throw new Error("a backfill window or a re-read needs fromMs and untilMs");
  const ownWindow = b !== undefined && "window" in b;
  const cursorStream = b === undefined ? BILLS_STREAM : "window" in b ? b.window : null;
  const cursor = cursorStream === null ? undefined : await readCursor(o.db, o.accountName, cursorStream);
  let fromMs = o.fromMs ?? incrementalStart(cursor, o.backfillFromMs, o.lookbackMs);
  // A backfill window resumes after what it already committed.
  if (ownWindow && cursor !== undefined) fromMs = Math.max(fromMs, cursor + 1);
  const toMs = o.untilMs ?? Date.now();
  const runStream = b !== undefined && "none" in b ? b.none : (cursorStream ?? REPAIR_STREAM);
  if (o.source === "v3") return syncAccountIncome(o, { fromMs, toMs, cursorStream, runStream });
  const limit = o.limit ?? BILLS_MAX_LIMIT;
  const initialWindowMs = ownWindow ? await backfillWindowStart(o.db, o.accountName, fromMs, toMs, limit) : undefined;
  const logger = o.logger.child({ account: o.accountName, stream: runStream });
  const profile = await loadExchangeProfile(o, limit);
  // The incremental cursor says every bill up to it is stored. Windows are proven on the time the
  // exchange filters on, which may lie up to filterOffsetMs after a bill's own: the cursor stays
  // that much behind, so the next run reads that edge again. (A backfill window's bookmark marks
  // the window's progress, not the books', and is left as is.)
  const incrementalCursor = (windowEndMs: number) =>
    cursorStream === BILLS_STREAM ? windowEndMs - profile.filterOffsetMs : windowEndMs;
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
        {
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
          ...(o.onLateness && cursorStream === BILLS_STREAM && cursor !== undefined
            ? { onInserted: o.onLateness }
            : {}),
          logger,
          signal: o.signal,
        },
      ),
    (s) => ({
      outcome: s.unverifiedMilliseconds.length > 0 ? "unverified" : "ok",
      pages: s.requests,
      recordsFetched: s.billsFetched,
      recordsNew: s.inserted,
      recordsChanged: s.revised,
      quarantined: s.quarantined,
      detail: {
        windows: s.windows,
        splitMilliseconds: s.splitMilliseconds,
        unverifiedMilliseconds: s.unverifiedMilliseconds,
        unknownBusinessTypes: s.unknownBusinessTypes,
        historyFromMs: s.historyFromMs,
        exchange: s.exchange,
      },
    }),
    () => o.signal?.aborted === true,
  ).finally(() => saveExchangeFacts(o.db, o.accountName, profile.facts()));
  if (summary.historyFromMs !== null) {
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
  logger.info(summary, "bills sync finished");
  return summary;
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
