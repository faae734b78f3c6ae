// sync_runs: one row per run of a stream, so an auditor can list what was fetched when. The row is
// written when the run starts and completed when it ends, so a process that dies mid-run leaves a
// row that stays "running": the trail shows the attempt, and the next run's row shows the redo.
import type { Db } from "./prisma.ts";
import { alone, type SqlPart } from "./sql-part.ts";

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

/**
 * SQL of the insert that opens a run, for startRun and for another statement to carry (the lease's
 * take: bills job start). The arguments are SQL expressions; `when` makes it conditional. Returns
 * the run's id and its window (epoch ms as text).
 */
export function openRunSql(account: string, stream: string, fromMs: string, toMs: string, when = "true"): string {
  return `INSERT INTO sync_runs
       (account_name, stream, window_from_ms, window_to_ms, window_from, window_to, started_at, outcome)
     SELECT ${account}::text, ${stream}::text, ${fromMs}::bigint, ${toMs}::bigint,
            timestamptz 'epoch' + ${fromMs}::bigint * interval '1 millisecond',
            timestamptz 'epoch' + ${toMs}::bigint * interval '1 millisecond',
            now(), 'running'
     WHERE ${when}
     RETURNING id, window_from_ms::text AS from_ms, window_to_ms::text AS to_ms`;
}

/**
 * A run's row opened by another statement (the lease's take), for recordRun to finish. `claimed`
 * turns true once recordRun has it: until then, finishing it is the opener's.
 */
export interface OpenedRun {
  id: bigint;
  accountName: string;
  stream: string;
  windowFromMs: number | null;
  windowToMs: number | null;
  claimed: boolean;
  /**
   * The opener sends the finish of a run that ended well with its next statement (finishRunPart):
   * recordRun leaves it in `finish` instead of sending it. A failed run is finished at once.
   */
  finishLater?: boolean;
  /** The finish recordRun left to send (finishLater); the opener clears it once sent. */
  finish?: SqlPart;
}

export async function startRun(db: Db, r: RunStart): Promise<bigint> {
  const rows = await db.$queryRawUnsafe<{ id: bigint }[]>(
    openRunSql("$1", "$2", "$3", "$4"),
    r.accountName,
    r.stream,
    ms(r.windowFromMs),
    ms(r.windowToMs),
  );
  return rows[0]!.id;
}

export async function finishRun(db: Db, accountName: string, id: bigint, e: RunEnd): Promise<void> {
  const { text, values } = alone(finishRunPart(accountName, id, e));
  await db.$executeRawUnsafe(text, ...values);
}

/** The update that finishes a run, as a part another statement can carry (store/sql-part.ts). */
export function finishRunPart(accountName: string, id: bigint, e: RunEnd): SqlPart {
  return {
    sql: (p) => `UPDATE sync_runs
     SET finished_at = now(), outcome = ${p(2)}, error = ${p(3)}, pages = ${p(4)}::int,
         records_fetched = ${p(5)}::int, records_new = ${p(6)}::int, records_changed = ${p(7)}::int,
         quarantined = ${p(8)}::int, detail = ${p(9)}::jsonb
     WHERE account_name = ${p(10)} AND id = ${p(1)}::bigint`,
    values: [
      String(id),
      e.outcome,
      e.error ?? null,
      e.pages ?? 0,
      e.recordsFetched ?? 0,
      e.recordsNew ?? 0,
      e.recordsChanged ?? 0,
      e.quarantined ?? 0,
      e.detail === undefined ? null : JSON.stringify(e.detail),
      accountName,
    ],
  };
}

/**
 * Runs `body` as a recorded run: the row is started first (or was, `opened`, by the statement that
 * took the lease) and always completed, with the outcome `figures` derives from the result, or
 * "failed"/"interrupted" and the error when it throws. A failure to record the end is not allowed
 * to hide the run's own error. An opened row is taken only for this very run (account, stream and
 * window); otherwise recordRun throws and the row stays its opener's to finish.
 */
export async function recordRun<T>(
  db: Db,
  start: RunStart,
  body: () => Promise<T>,
  figures: (result: T) => RunFigures & { outcome?: RunOutcome },
  interrupted: () => boolean,
  opened?: OpenedRun,
): Promise<T> {
  const id = opened ? claimRun(opened, start) : await startRun(db, start);
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
  const end: RunEnd = { ...f, outcome: f.outcome ?? "ok" };
  if (opened?.finishLater) opened.finish = finishRunPart(start.accountName, id, end);
  else await finishRun(db, start.accountName, id, end);
  return result;
}

function claimRun(opened: OpenedRun, start: RunStart): bigint {
  const same =
    opened.accountName === start.accountName &&
    opened.stream === start.stream &&
    opened.windowFromMs === (start.windowFromMs ?? null) &&
    opened.windowToMs === (start.windowToMs ?? null);
  if (!same)
    throw new Error(
      `the run opened with the lease (${opened.stream} ${opened.windowFromMs}-${opened.windowToMs}) is not ` +
        `this run (${start.stream} ${start.windowFromMs}-${start.windowToMs})`,
    );
  opened.claimed = true;
  return opened.id;
}
