// A backfill range split into windows with deterministic job ids: enqueueing the same backfill
// twice adds nothing, and a window's bookmark (bills-backfill:<from>-<to>) survives any crash.
import type { JobData } from "./queues.ts";

export interface BackfillWindow {
  jobId: string;
  data: JobData["backfill"];
}

export const DEFAULT_BACKFILL_WINDOW_MS = 86_400_000;

/** A window's own bookmark in sync_state. */
export const backfillCursorStream = (fromMs: number, toMs: number) => `bills-backfill:${fromMs}-${toMs}`;

/** BullMQ custom ids may not contain ':'. */
export const backfillJobId = (account: string, fromMs: number, toMs: number) => `backfill_${account}_${fromMs}_${toMs}`;

export function planBackfill(
  account: string,
  fromMs: number,
  toMs: number,
  windowMs = DEFAULT_BACKFILL_WINDOW_MS,
): BackfillWindow[] {
  if (!(toMs >= fromMs))
    throw new Error(
      `backfill range is empty: --to (${new Date(toMs).toISOString()}) ` +
        `is before --from (${new Date(fromMs).toISOString()})`,
    );
  const backfillId = `${account}_${fromMs}_${toMs}`;
  const windows: BackfillWindow[] = [];
  for (let start = fromMs; start <= toMs; start += windowMs) {
    const end = Math.min(toMs, start + windowMs - 1);
    const previous = windows.at(-1)?.data;
    windows.push({
      jobId: backfillJobId(account, start, end),
      data: {
        account,
        fromMs: start,
        toMs: end,
        backfillId,
        ...(previous ? { previous: { fromMs: previous.fromMs, toMs: previous.toMs } } : {}),
      },
    });
  }
  // Each window names its successor, so finishing it can start the next one at once.
  for (let i = 0; i + 1 < windows.length; i++)
    windows[i]!.data.next = { fromMs: windows[i + 1]!.data.fromMs, toMs: windows[i + 1]!.data.toMs };
  return windows;
}
