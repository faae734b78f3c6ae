// Progress of a backfill, read from what is durably stored: a window is done when its own
// bookmark (bills-backfill:<from>-<to>) reached its end; bills are counted in the range.
import { accountKey, instantOf } from "./ledger-rows.ts";
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
    // On bill_rows' (account_id, created_at, bill_id): an index-only count of the range, in the
    // months it spans, instead of reading every bill of the account.
    `SELECT count(*)::int AS bills FROM bill_rows
     WHERE account_id = ${accountKey("$1")} AND created_at BETWEEN ${instantOf("$2")} AND ${instantOf("$3")}`,
    account,
    fromMs,
    toMs,
  );
  return row?.bills ?? 0;
}
