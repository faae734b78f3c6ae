// What `ledger-sync status` reports from PostgreSQL: per account and stream, the bookmark and when
// it last moved, and quarantined counts. (Failed jobs come from the queues.)
import type { Db } from "./prisma.ts";

export interface StreamStatus {
  account: string;
  stream: string;
  cursorMs: number;
  lastSuccess: Date;
}

export interface StoreStatus {
  streams: StreamStatus[];
  /** Backfill windows finished per account (their own bookmarks). */
  backfillWindows: Record<string, number>;
  quarantined: Record<string, number>;
}

export async function readStoreStatus(db: Db): Promise<StoreStatus> {
  const rows = await db.$queryRawUnsafe<{ account_name: string; stream: string; cursor_ms: bigint; updated_at: Date }[]>(
    "SELECT account_name, stream, cursor_ms, updated_at FROM sync_state ORDER BY account_name, stream",
  );
  const quarantine = await db.$queryRawUnsafe<{ account_name: string; n: number }[]>("SELECT account_name, count(*)::int AS n FROM quarantine GROUP BY account_name");
  const backfillWindows: Record<string, number> = {};
  const streams: StreamStatus[] = [];
  for (const r of rows) {
    if (r.stream.startsWith("bills-backfill:")) backfillWindows[r.account_name] = (backfillWindows[r.account_name] ?? 0) + 1;
    else streams.push({ account: r.account_name, stream: r.stream, cursorMs: Number(r.cursor_ms), lastSuccess: r.updated_at });
  }
  return { streams, backfillWindows, quarantined: Object.fromEntries(quarantine.map((q) => [q.account_name, q.n])) };
}
