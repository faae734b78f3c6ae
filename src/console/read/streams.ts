// What the console shows of an account's streams: what `ledger-sync status` reads (the bookmark,
// when it last moved, quarantine counts, cross-checks: store/status.ts), of that account only, plus
// each stream's last failed run with its error from sync_runs. `status` takes the last error from
// the failed jobs in Redis; the console reads only PostgreSQL, so that the grant-readonly role is
// all it needs.
import type { Db } from "../../store/prisma.ts";
import { readStoreStatus, type StoreStatus, type StreamStatus } from "../../store/status.ts";

export interface LastError {
  at: Date;
  error: string;
}

export interface AccountStreams {
  streams: (StreamStatus & { lastError: LastError | null })[];
  backfillWindows: number;
  quarantined: number;
  crossCheck: StoreStatus["crossChecks"][number] | null;
}

/** A stream's last error is looked for among its newest runs, at most this many (a week of minute runs). */
export const LAST_RUNS_SEARCHED = 10_000;

/** sync_runs names a run by its stream without the coin: "snapshots:2" runs as "snapshots". */
const runStream = (stream: string) => stream.split(":")[0]!;

export async function readAccountStreams(db: Db, account: string): Promise<AccountStreams> {
  const store = await readStoreStatus(db, [account]);
  const streams = store.streams;
  const runStreams = [...new Set(streams.map((s) => runStream(s.stream)))];
  // Each stream's newest runs down the (account_name, stream, started_at) index: the search stops
  // at its last failure, and never reads more than LAST_RUNS_SEARCHED runs of a stream that has
  // not failed for long (a year of minute-by-minute runs is half a million rows).
  const failures = await db.$queryRawUnsafe<{ stream: string; finished_at: Date; error: string | null }[]>(
    `SELECT s.stream, f.finished_at, f.error
     FROM unnest($2::text[]) AS s(stream)
     CROSS JOIN LATERAL (
       SELECT coalesce(r.finished_at, r.started_at) AS finished_at, r.error
       FROM (SELECT started_at, finished_at, outcome, error FROM sync_runs
             WHERE account_name = $1 AND stream = s.stream ORDER BY started_at DESC LIMIT $3) r
       WHERE r.outcome = 'failed' ORDER BY r.started_at DESC LIMIT 1
     ) f`,
    account,
    runStreams,
    LAST_RUNS_SEARCHED,
  );
  const lastError = new Map(
    failures.map((f) => [f.stream, { at: f.finished_at, error: f.error ?? "(no reason recorded)" }]),
  );
  return {
    streams: streams.map((s) => ({ ...s, lastError: lastError.get(runStream(s.stream)) ?? null })),
    backfillWindows: store.backfillWindows[account] ?? 0,
    quarantined: store.quarantined[account] ?? 0,
    crossCheck: store.crossChecks[0] ?? null,
  };
}
