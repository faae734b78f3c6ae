// Whether an account's incremental bills sync is catching up on history: its bills cursor (or,
// before the first sync, its backfill start) lies further behind now than a few intervals. Such a
// sync draws from the egress's catch-up share of the IP budget (exchange/catch-up-share.ts).
import { catchUpThresholdMs } from "../../exchange/catch-up-share.ts";
import { readCursor } from "../../store/cursors.ts";
import type { Db } from "../../store/prisma.ts";
import { BILLS_STREAM } from "../bills-core/stream-name.ts";

export async function isBehind(
  db: Db,
  o: { accountName: string; backfillFromMs: number; billsIntervalMs: number; nowMs?: number },
): Promise<boolean> {
  const cursor = (await readCursor(db, o.accountName, BILLS_STREAM)) ?? o.backfillFromMs;
  return (o.nowMs ?? Date.now()) - cursor > catchUpThresholdMs(o.billsIntervalMs);
}
