// Progress of a backfill, read from what is durably stored: a window is done when its own
// bookmark (bills-backfill:<from>-<to>) reached its end; bills are counted in the range.
import type { Db } from "./prisma.ts";

type Window = { fromMs: number; toMs: number };

/** Windows whose bookmark reached their end (one small join over sync_state). */
export async function backfillWindowsDone(
  db: Db,
  account: string,
  windows: Window[],
  streamOf: (fromMs: number, toMs: number) => string,
): Promise<number> {
  if (windows.length === 0) return 0;
  const [row] = await db.$queryRawUnsafe<{ done: number }[]>(
    `SELECT count(*)::int AS done
     FROM sync_state s JOIN unnest($2::text[], $3::bigint[]) AS w(stream, to_ms) ON s.stream = w.stream
     WHERE s.account_name = $1 AND s.cursor_ms >= w.to_ms`,
    account,
    windows.map((w) => streamOf(w.fromMs, w.toMs)),
    windows.map((w) => String(w.toMs)),
  );
  return row?.done ?? 0;
}

/** Bills stored for the account created within [fromMs, toMs]. */
export async function countBills(db: Db, account: string, fromMs: number, toMs: number): Promise<number> {
  const [row] = await db.$queryRawUnsafe<{ bills: number }[]>(
    // On created_at, not created_at_ms: (account_name, created_at) is indexed, so this is an
    // index-only count of the range instead of reading every bill of the account.
    `SELECT count(*)::int AS bills FROM bills
     WHERE account_name = $1
       AND created_at BETWEEN timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
                          AND timestamptz 'epoch' + $3::bigint * interval '1 millisecond'`,
    account,
    fromMs,
    toMs,
  );
  return row?.bills ?? 0;
}
