// A backfill range split into windows with deterministic job ids: enqueueing the same backfill
// twice adds nothing, and a window's bookmark (bills-backfill:<from>-<to>) survives any crash.
import type { JobData } from "./queues.ts";

export interface BackfillWindow {
  jobId: string;
  data: JobData["backfill"];
}

export const DEFAULT_BACKFILL_WINDOW_MS = 86_400_000;

export function planBackfill(account: string, fromMs: number, toMs: number, windowMs = DEFAULT_BACKFILL_WINDOW_MS): BackfillWindow[] {
  if (!(toMs >= fromMs)) throw new Error(`backfill range is empty: --to (${new Date(toMs).toISOString()}) is before --from (${new Date(fromMs).toISOString()})`);
  const backfillId = `${account}_${fromMs}_${toMs}`;
  const windows: BackfillWindow[] = [];
  for (let start = fromMs; start <= toMs; start += windowMs) {
    const end = Math.min(toMs, start + windowMs - 1);
    // BullMQ custom ids may not contain ':'.
    const previous = windows.at(-1)?.data;
    windows.push({ jobId: `backfill_${account}_${start}_${end}`, data: { account, fromMs: start, toMs: end, backfillId, ...(previous ? { previous: { fromMs: previous.fromMs, toMs: previous.toMs } } : {}) } });
  }
  return windows;
}
