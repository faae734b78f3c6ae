// sync_runs: one row per run of a stream, so an auditor can list what was fetched when. The row is
// written when the run starts and completed when it ends, so a process that dies mid-run leaves a
// row that stays "running": the trail shows the attempt, and the next run's row shows the redo.
import type { Db } from "./prisma.ts";

export type RunOutcome = "ok" | "unverified" | "failed" | "interrupted";

export interface RunStart {
  accountName: string;
  stream: string;
  windowFromMs?: number;
  windowToMs?: number;
}

export interface RunFigures {
  pages: number;
  recordsFetched: number;
  recordsNew: number;
  recordsChanged: number;
  quarantined: number;
  detail?: Record<string, unknown>;
}

export interface RunEnd extends Partial<RunFigures> {
  outcome: RunOutcome;
  error?: string;
}

const ms = (v: number | undefined) => (v === undefined ? null : String(v));

export async function startRun(db: Db, r: RunStart): Promise<bigint> {
  const rows = await db.$queryRawUnsafe<{ id: bigint }[]>(
    `INSERT INTO sync_runs
       (account_name, stream, window_from_ms, window_to_ms, window_from, window_to, started_at, outcome)
     VALUES ($1, $2, $3::bigint, $4::bigint,
             timestamptz 'epoch' + $3::bigint * interval '1 millisecond',
             timestamptz 'epoch' + $4::bigint * interval '1 millisecond',
             now(), 'running')
     RETURNING id`,
    r.accountName,
    r.stream,
    ms(r.windowFromMs),
    ms(r.windowToMs),
  );
  return rows[0]!.id;
}

export async function finishRun(db: Db, accountName: string, id: bigint, e: RunEnd): Promise<void> {
  await db.$executeRawUnsafe(
    `UPDATE sync_runs
     SET finished_at = now(), outcome = $2, error = $3, pages = $4, records_fetched = $5, records_new = $6,
         records_changed = $7, quarantined = $8, detail = $9::jsonb
     WHERE account_name = $10 AND id = $1`,
    id,
    e.outcome,
    e.error ?? null,
    e.pages ?? 0,
    e.recordsFetched ?? 0,
    e.recordsNew ?? 0,
    e.recordsChanged ?? 0,
    e.quarantined ?? 0,
    e.detail === undefined ? null : JSON.stringify(e.detail),
    accountName,
  );
}

/**
 * Runs `body` as a recorded run: the row is started first and always completed, with the outcome
 * `figures` derives from the result, or "failed"/"interrupted" and the error when it throws. A
 * failure to record the end is not allowed to hide the run's own error.
 */
export async function recordRun<T>(
  db: Db,
  start: RunStart,
  body: () => Promise<T>,
  figures: (result: T) => RunFigures & { outcome?: RunOutcome },
  interrupted: () => boolean,
): Promise<T> {
  const id = await startRun(db, start);
  let result: T;
  try {
    result = await body();
  } catch (err) {
    const outcome: RunOutcome = interrupted() ? "interrupted" : "failed";
    await finishRun(db, start.accountName, id, {
      outcome,
      error: err instanceof Error ? err.message : String(err),
    }).catch(() => undefined);
    throw err;
  }
  const f = figures(result);
  await finishRun(db, start.accountName, id, { ...f, outcome: f.outcome ?? "ok" });
  return result;
}
