// Whether an account's incremental bills sync is catching up on history: its bills cursor (or,
// before the first sync, its backfill start) lies further behind now than a few intervals. Such a
// sync draws from the egress's catch-up share of the IP budget (exchange/catch-up-share.ts).
import { catchUpThresholdMs } from "../../exchange/catch-up-share.ts";

export function isBehind(o: {
  /** The bills cursor as read (null: never synced). */
  cursorMs: number | null;
  backfillFromMs: number;
  billsIntervalMs: number;
  nowMs?: number;
}): boolean {
  return (o.nowMs ?? Date.now()) - (o.cursorMs ?? o.backfillFromMs) > catchUpThresholdMs(o.billsIntervalMs);
}
