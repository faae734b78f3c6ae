// Progress of a backfill, read from what is durably stored: a window is done when its own
// bookmark (bills-backfill:<from>-<to>) reached its end; bills are counted in the range.
import type { Db } from "./prisma.ts";

export async function backfillProgress(db: Db, account: string, windows: { fromMs: number; toMs: number }[], streamOf: (fromMs: number, toMs: number) => string): Promise<{ windowsDone: number; bills: number }> {
  if (windows.length === 0) return { windowsDone: 0, bills: 0 };
  const [row] = await db.$queryRawUnsafe<{ done: number; bills: number }[]>(
    `SELECT
       (SELECT count(*)::int FROM sync_state s JOIN unnest($2::text[], $3::bigint[]) AS w(stream, to_ms) ON s.stream = w.stream
        WHERE s.account_name = $1 AND s.cursor_ms >= w.to_ms) AS done,
       (SELECT count(*)::int FROM bills WHERE account_name = $1 AND created_at_ms BETWEEN $4 AND $5) AS bills`,
    account,
    windows.map((w) => streamOf(w.fromMs, w.toMs)),
    windows.map((w) => String(w.toMs)),
    windows[0]!.fromMs,
    windows.at(-1)!.toMs,
  );
  return { windowsDone: row?.done ?? 0, bills: row?.bills ?? 0 };
}
