// The scheduled bills job's start, in the statement that takes its lease (issue 32: one round trip
// where there were four): the take (store/run-lease.ts) carries the bills cursor's read
// (store/cursors.ts), the exchange profile's (store/exchange-profiles.ts) and the opening of the
// run's sync_runs row (store/sync-runs.ts), its window from that cursor (incremental-start.ts).
// Each part is its owner's SQL; this file only puts them together. Rules, and why:
// - The run is opened only when the lease is taken (`taken`), and the job's take marks the group's
//   runs left running interrupted in the same statement, never this one (one snapshot).
// - The reads see the database as the take began: a take that waited for a taken-over holder's
//   last fenced write reads the cursor from before it. A cursor only grows, so the run then re-reads
//   more, never less.
// - The row is the job's to finish until recordRun takes it (OpenedRun.claimed); a take whose
//   answer cannot be used finishes it as interrupted with the release (`unused`).
// See docs/design/write-path.md, "Round trips of a quiet job".
import { cursorSql } from "../../store/cursors.ts";
import { exchangeFactsSql, toExchangeFacts, type ExchangeFacts } from "../../store/exchange-profiles.ts";
import type { TakeRider } from "../../store/run-lease.ts";
import { finishRunPart, openRunSql, type OpenedRun } from "../../store/sync-runs.ts";
import { BILLS_STREAM } from "../bills-core/stream-name.ts";
import { incrementalStartSql } from "./incremental-start.ts";

export interface BillsJobStartOptions {
  account: string;
  /** BACKFILL_FROM of the account: the start before the first sync. */
  backfillFromMs: number;
  /** SYNC_LOOKBACK_MS. */
  lookbackMs: number;
  /** The run's end (now, as the job sees it): the plan's `untilMs`. */
  untilMs: number;
}

/** What the take read and opened for the job. */
export interface BillsJobStart {
  /** The incremental cursor as read (null: never synced): the plan's `cursorAsRead`. */
  cursorMs: number | null;
  /** The stored exchange facts (null: none yet): the plan's `profileAsRead`. */
  facts: ExchangeFacts | null;
  /** The run's row, opened with the window incrementalStart gives from the cursor and `untilMs`. */
  run: OpenedRun;
}

const CURSOR = "(SELECT cursor_ms FROM job_cursor)";
/** The run is opened only with the lease (run-lease.ts names the take's row `taken`). */
const ONLY_TAKEN = "EXISTS (SELECT 1 FROM taken)";
const UNUSED_ERROR = "the job stopped before its run began (the worker was stopping)";

/** The rider of the job's take (leaseAccount's `rider`). */
export function billsJobRider(o: BillsJobStartOptions): TakeRider {
  return {
    sql: (p) => ({
      items: [
        `job_cursor AS (${cursorSql(`${p(1)}::text`, `${p(2)}::text`)})`,
        `job_profile AS (${exchangeFactsSql(`${p(1)}::text`)})`,
        `job_run AS (${openRunSql(p(1), p(2), incrementalStartSql(CURSOR, p(3), p(4)), p(5), ONLY_TAKEN)})`,
      ],
      columns: [
        `${CURSOR}::text AS job_cursor_ms`,
        "(SELECT row_to_json(f) FROM job_profile f) AS job_profile",
        "(SELECT row_to_json(r) FROM (SELECT id::text AS id, from_ms, to_ms FROM job_run) r) AS job_run",
      ],
    }),
    values: [o.account, BILLS_STREAM, String(o.backfillFromMs), String(o.lookbackMs), String(o.untilMs)],
    unused: (carried) =>
      finishRunPart(o.account, readBillsJobStart(o.account, carried).run.id, {
        outcome: "interrupted",
        error: UNUSED_ERROR,
      }),
  };
}

interface Carried {
  job_cursor_ms: string | null;
  job_profile: object | null;
  job_run: { id: string; from_ms: string | null; to_ms: string | null } | null;
}

/** The job's start, from the columns its take answered with (Lease.carried). */
export function readBillsJobStart(account: string, carried: Record<string, unknown> | undefined): BillsJobStart {
  const c = carried as Partial<Carried> | undefined;
  if (!c?.job_run) throw new Error("the bills job's lease was taken without opening its run");
  const ms = (v: string | null) => (v === null ? null : Number(v));
  return {
    cursorMs: ms(c.job_cursor_ms ?? null),
    facts: c.job_profile ? toExchangeFacts(c.job_profile) : null,
    run: {
      id: BigInt(c.job_run.id),
      accountName: account,
      stream: BILLS_STREAM,
      windowFromMs: ms(c.job_run.from_ms),
      windowToMs: ms(c.job_run.to_ms),
      claimed: false,
    },
  };
}
