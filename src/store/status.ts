// What `ledger-sync status` reports from PostgreSQL: per account and stream, the bookmark and when
// it last moved, quarantined counts, what was learnt of the exchange, and the last cross-checks.
// (Failed jobs come from the queues; the worker's last verify from verify/verify-status.ts; the
// fleet's order, states and totals from accounts/overview.ts.) Of every account, or of the listed
// ones only (a page of the fleet, one account of the console): the same few queries either way.
import { readAllExchangeFacts, type StoredExchangeFacts } from "./exchange-profiles.ts";
import type { Db } from "./prisma.ts";

export interface StreamStatus {
  account: string;
  stream: string;
  cursorMs: number;
  lastSuccess: Date;
}

/** The last cross-check of an account (verify --cross-check, or the worker's CROSS_CHECK_INTERVAL_MS). */
export interface CrossCheckStatus {
  account: string;
  at: Date;
  fromMs: number | null;
  toMs: number | null;
  outcome: string;
  /** What differed ("1 missing in the store, ..."), or the failure; null when it passed. */
  error: string | null;
}

export interface StoreStatus {
  streams: StreamStatus[];
  /** Backfill windows finished per account (their own bookmarks). */
  backfillWindows: Record<string, number>;
  quarantined: Record<string, number>;
  /** What was learnt of the exchange, per account that has stored facts. */
  exchange: StoredExchangeFacts[];
  crossChecks: CrossCheckStatus[];
}

/** `accounts`: only these (undefined: every account). */
export async function readStoreStatus(db: Db, accounts?: readonly string[]): Promise<StoreStatus> {
  const only = accounts === undefined ? null : [...accounts];
  const rows = await db.$queryRawUnsafe<
    { account_name: string; stream: string; cursor_ms: bigint; updated_at: Date }[]
  >(
    `SELECT account_name, stream, cursor_ms, updated_at FROM sync_state
     WHERE $1::text[] IS NULL OR account_name = ANY($1) ORDER BY account_name, stream`,
    only,
  );
  const quarantine = await db.$queryRawUnsafe<{ account_name: string; n: number }[]>(
    `SELECT account_name, count(*)::int AS n FROM quarantine
     WHERE $1::text[] IS NULL OR account_name = ANY($1) GROUP BY account_name`,
    only,
  );
  const listed = only === null ? undefined : new Set(only);
  const backfillWindows: Record<string, number> = {};
  const streams: StreamStatus[] = [];
  for (const r of rows) {
    if (r.stream.startsWith("bills-backfill:"))
      backfillWindows[r.account_name] = (backfillWindows[r.account_name] ?? 0) + 1;
    else
      streams.push({
        account: r.account_name,
        stream: r.stream,
        cursorMs: Number(r.cursor_ms),
        lastSuccess: r.updated_at,
      });
  }
  return {
    streams,
    backfillWindows,
    quarantined: Object.fromEntries(quarantine.map((q) => [q.account_name, q.n])),
    // exchange_profiles holds one small row per account: read whole, then kept to the accounts asked.
    exchange: (await readAllExchangeFacts(db)).filter((e) => listed === undefined || listed.has(e.account)),
    crossChecks: await readCrossChecks(db, only),
  };
}

/**
 * Each account's last finished cross-check run. Of listed accounts, each one's newest runs down the
 * (account_name, stream, started_at) index; of every account, one pass over the cross-check runs.
 */
async function readCrossChecks(db: Db, only: string[] | null): Promise<CrossCheckStatus[]> {
  const rows = await db.$queryRawUnsafe<
    {
      account_name: string;
      finished_at: Date;
      window_from_ms: bigint | null;
      window_to_ms: bigint | null;
      outcome: string;
      error: string | null;
    }[]
  >(
    only === null
      ? `SELECT DISTINCT ON (account_name) account_name, finished_at, window_from_ms, window_to_ms, outcome, error
         FROM sync_runs WHERE stream = 'cross-check' AND finished_at IS NOT NULL
         ORDER BY account_name, finished_at DESC`
      : `SELECT a.account_name, r.finished_at, r.window_from_ms, r.window_to_ms, r.outcome, r.error
         FROM unnest($1::text[]) AS a(account_name)
         CROSS JOIN LATERAL (
           SELECT finished_at, window_from_ms, window_to_ms, outcome, error FROM sync_runs
           WHERE account_name = a.account_name AND stream = 'cross-check' AND finished_at IS NOT NULL
           ORDER BY started_at DESC LIMIT 1
         ) r ORDER BY a.account_name`,
    ...(only === null ? [] : [only]),
  );
  return rows.map((r) => ({
    account: r.account_name,
    at: r.finished_at,
    fromMs: r.window_from_ms === null ? null : Number(r.window_from_ms),
    toMs: r.window_to_ms === null ? null : Number(r.window_to_ms),
    outcome: r.outcome,
    error: r.error,
  }));
}
