// The fleet's health in one query, cheap at any size (the worker runs it on every /metrics scrape):
// how many accounts are fresh, stale, failing or disabled, how close each is to the edge of the
// history the exchange keeps, and how late the scheduler is. See docs/design/fleet-metrics.md.
import type { Db } from "./prisma.ts";

export const ACCOUNT_STATES = ["fresh", "stale", "failing", "disabled"] as const;
export type AccountState = (typeof ACCOUNT_STATES)[number];

export interface FleetHealthOptions {
  /** The active accounts the worker syncs (variables, ACCOUNTS_FILE and the table's active ones). */
  names: readonly string[];
  /** A bills cursor further behind now than this makes its account stale (HEALTH_MAX_SYNC_AGE_MS). */
  staleAfterMs: number;
  /** EXCHANGE_HISTORY_DAYS: the history depth of accounts whose own was not learnt. */
  historyDaysDefault?: number;
  now?: Date;
}

export interface HistoryHorizon {
  account: string;
  /** How many days of history the exchange keeps for the account. */
  depthDays: number;
  /** depthDays less the age of the bills cursor: bills not yet fetched are deleted after this. */
  daysLeft: number;
}

export interface FleetHealth {
  counts: Record<AccountState, number>;
  /** The accounts in each state, by name. */
  byState: Record<AccountState, string[]>;
  /** Accounts with a bills cursor and a known history depth, by name. */
  history: HistoryHorizon[];
  /** The smallest daysLeft; null when no account has one. */
  historyDaysLeftMin: number | null;
  /** How late the stalest due bills item of `names` is (0 when nothing is overdue). */
  schedulerLagMs: number;
}

const DAY_MS = 86_400_000;

/**
 * The fleet is `names` and every accounts row: a row the worker does not sync (its credentials
 * cannot be opened) is still an account whose copy falls behind. States, first match wins, as
 * `accounts list` and the console decide (store/accounts/overview.ts): disabled (the row says so);
 * failing (never synced, the last verify failed, or the last bills run failed; failed jobs, which
 * live in Redis, only `status` adds); stale (the bills cursor is over staleAfterMs behind); fresh.
 * The scheduler lag reads only the bills rows of `names`: rows of work no longer wanted (a disabled
 * account, a removed coin) stay due forever and would read as an ever-growing lag.
 */
const FLEET_SQL = `
WITH listed AS (SELECT DISTINCT unnest($1::text[]) AS name),
fleet AS (
  SELECT coalesce(a.name, l.name) AS name, coalesce(a.status = 'disabled', false) AS disabled
  FROM accounts a FULL JOIN listed l ON l.name = a.name
),
per_account AS (
  SELECT f.name,
         CASE WHEN f.disabled THEN 'disabled'
              WHEN s.cursor_ms IS NULL OR v.outcome = 'fail' OR r.last_outcome = 'failed' THEN 'failing'
              WHEN $2::float8 - s.cursor_ms > $3::float8 THEN 'stale'
              ELSE 'fresh' END AS state,
         CASE WHEN NOT f.disabled AND s.cursor_ms IS NOT NULL
              THEN coalesce(p.history_ms::float8 / ${DAY_MS}, $4::float8) END AS depth_days,
         s.cursor_ms::float8 AS cursor_ms
  FROM fleet f
  LEFT JOIN sync_state s ON s.account_name = f.name AND s.stream = 'bills'
  LEFT JOIN verify_state v ON v.account_name = f.name
  LEFT JOIN exchange_profiles p ON p.account_name = f.name
  LEFT JOIN bills_run_stats r ON r.account_name = f.name
)
SELECT
  (SELECT greatest(0, $2::float8 - extract(epoch FROM min(due_at))::float8 * 1000)
     FROM sync_schedule
     WHERE kind = 'bills' AND account_name = ANY($1::text[]) AND due_at <= to_timestamp($2::float8 / 1000)
  ) AS lag_ms,
  coalesce(
    json_agg(
      json_build_array(name, state, depth_days, depth_days - ($2::float8 - cursor_ms) / ${DAY_MS}) ORDER BY name
    ),
    '[]'::json
  ) AS accounts
FROM per_account`;

type Row = [name: string, state: AccountState, depthDays: number | null, daysLeft: number | null];

export async function readFleetHealth(db: Db, o: FleetHealthOptions): Promise<FleetHealth> {
  const nowMs = (o.now ?? new Date()).getTime();
  const [r] = await db.$queryRawUnsafe<{ lag_ms: number | null; accounts: Row[] }[]>(
    FLEET_SQL,
    [...o.names],
    nowMs,
    o.staleAfterMs,
    o.historyDaysDefault ?? null,
  );
  const rows = r?.accounts ?? [];
  const byState = Object.fromEntries(ACCOUNT_STATES.map((s) => [s, [] as string[]])) as Record<AccountState, string[]>;
  const history: HistoryHorizon[] = [];
  for (const [account, state, depthDays, daysLeft] of rows) {
    byState[state].push(account);
    if (depthDays !== null && daysLeft !== null) history.push({ account, depthDays, daysLeft });
  }
  return {
    counts: Object.fromEntries(ACCOUNT_STATES.map((s) => [s, byState[s].length])) as Record<AccountState, number>,
    byState,
    history,
    historyDaysLeftMin: history.reduce<number | null>(
      (m, h) => (m === null ? h.daysLeft : Math.min(m, h.daysLeft)),
      null,
    ),
    schedulerLagMs: Math.round(r?.lag_ms ?? 0),
  };
}
