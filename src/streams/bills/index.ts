// The bills stream's entry for one account: works out where the run begins and ends and which
// bookmark it moves, then hands it to the account's source: v2 (../bills-v2, the bills endpoint
// paged by time windows) or v3 (../bills-v3, the income endpoint paged by a cursor). Both take what
// they share from ../bills-core, never from each other; the rest of the code imports the stream
// from here.
import { readCursor } from "../../store/cursors.ts";
import type { BillsAccountSync, BillsRunPlan } from "../bills-core/account-sync.ts";
import { BILLS_STREAM } from "../bills-core/stream-name.ts";
import type { BillsSyncSummary } from "../bills-core/sync-summary.ts";
import { syncAccountBillsV2 } from "../bills-v2/index.ts";
import { syncAccountIncome } from "../bills-v3/index.ts";
import { incrementalStart } from "./incremental-start.ts";

export type { BillsAccountSync, BillsBookmark } from "../bills-core/account-sync.ts";
export { RangeRefusedError, TimeFilterIgnoredError } from "../bills-core/errors.ts";
export type { ExchangeLimitsSetting } from "../bills-core/exchange-profile.ts";
export { BILLS_STREAM } from "../bills-core/stream-name.ts";
export type { BillsSyncSummary } from "../bills-core/sync-summary.ts";
export { UnsplittableMillisecondError } from "../bills-v2/errors.ts";

export { incrementalStart } from "./incremental-start.ts";

/** The stream name a run is recorded under in sync_runs. */
export const REPAIR_STREAM = "bills-repair";

export async function syncAccountBills(o: BillsAccountSync): Promise<BillsSyncSummary> {
  const b = o.bookmark;
  if (b !== undefined && (o.fromMs === undefined || o.untilMs === undefined))
    throw new Error("a backfill window or a re-read needs fromMs and untilMs");
  const ownWindow = b !== undefined && "window" in b;
  const cursorStream = b === undefined ? BILLS_STREAM : "window" in b ? b.window : null;
  if (b !== undefined && (o.cursorAsRead !== undefined || o.openedRun !== undefined))
    throw new Error("cursorAsRead and openedRun are the incremental run's");
  const cursor =
    cursorStream === null
      ? undefined
      : o.cursorAsRead !== undefined
        ? (o.cursorAsRead ?? undefined)
        : await readCursor(o.db, o.accountName, cursorStream);
  let fromMs = o.fromMs ?? incrementalStart(cursor, o.backfillFromMs, o.lookbackMs);
  // A backfill window resumes after what it already committed.
  if (ownWindow && cursor !== undefined) fromMs = Math.max(fromMs, cursor + 1);
  const toMs = o.untilMs ?? Date.now();
  const runStream = b !== undefined && "none" in b ? b.none : (cursorStream ?? REPAIR_STREAM);
  const plan: BillsRunPlan = { fromMs, toMs, cursorStream, runStream };
  if (o.source === "v3") return syncAccountIncome(o, plan);
  return syncAccountBillsV2(o, { ...plan, cursorMs: cursor, backfillWindow: ownWindow });
}
