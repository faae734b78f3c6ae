// The fleet at a glance, in one query whatever its size: `ledger-sync status`, the console's accounts
// page and `accounts list` all read it here. Each account with its state and how far its bills are
// behind, failing first (never synced, last verify failed, last bills run failed, or failed jobs in
// the queues), then the most behind, disabled accounts last: what needs a look comes first.
// See docs/design/fleet-views.md (the query, its cost at 1,000 accounts, the command that measures it).
//
// Only the accounts table's public columns are read (columns.ts): the console's read-only role
// cannot select the sealed ones, and nothing here needs them.
import type { Db } from "../prisma.ts";
import type { AccountStatus } from "./columns.ts";

export const FLEET_STATES = ["failing", "stale", "fresh", "disabled"] as const;
/**
 * disabled: paused in the accounts table; failing: see FailingReason; stale: bills lag over
 * `staleAfterMs` (HEALTH_MAX_SYNC_AGE_MS); fresh: the rest. The first that applies, in that order.
 */
export type FleetState = (typeof FLEET_STATES)[number];

export const FAILING_REASONS = ["never synced", "verify failed", "last bills run failed", "failed jobs"] as const;
export type FailingReason = (typeof FAILING_REASONS)[number];

/**
 * Requests per account are the pages of its last RUNS_AVERAGED finished incremental bills runs,
 * averaged: one run per BILLS_INTERVAL_MS, so about its requests per interval. They are read from
 * bills_run_stats, one row per account that triggers on sync_runs keep (its migration holds the 10),
 * however long sync_runs grows.
 */
export const RUNS_AVERAGED = 10;

const DAY_MS = 86_400_000;

export interface FleetQuery {
  /** Only accounts of the accounts table (`accounts list`); otherwise every account the database knows. */
  registeredOnly?: boolean;
  /** Registration status (the accounts table's active | disabled). */
  status?: AccountStatus;
  state?: FleetState;
  /** Only accounts whose name contains this text, ignoring case. */
  search?: string;
  /** Only these names, exactly. */
  names?: string[];
  /** null: every account. */
  limit: number | null;
  offset: number;
  /** Lag and history are measured from this instant (epoch ms); default now. */
  nowMs?: number;
  /** Bills lag over this is stale (HEALTH_MAX_SYNC_AGE_MS); default 900000. */
  staleAfterMs?: number;
  /** EXCHANGE_HISTORY_DAYS: the history depth of accounts whose exchange profile has not learnt one. */
  historyDays?: number;
  /** Accounts with failed jobs in the queues (status reads Redis; the console reads PostgreSQL only). */
  withFailedJobs?: string[];
}

export interface FleetAccount {
  name: string;
  /** In the accounts table (else an account of the environment or ACCOUNTS_FILE, known by its rows). */
  registered: boolean;
  uid: string | null;
  /** Registration status; null when not registered. */
  status: AccountStatus | null;
  coins: string[];
  source: string | null;
  /** The bills cursor (epoch ms); null: never synced. */
  cursorMs: number | null;
  /** When the bills cursor last moved (null: never synced). */
  lastSuccess: Date | null;
  /** Seconds the bills cursor is behind now (null: never synced). */
  lagSeconds: number | null;
  /** The worker's last incremental verify: pass | fail | null (not run). */
  verify: "pass" | "fail" | null;
  verifyFailures: number;
  quarantined: number;
  state: FleetState;
  failing: boolean;
  /** Why it counts as failing (also listed for a disabled account). */
  reasons: FailingReason[];
  /** How far back the exchange keeps bills, in days: learnt per account, else EXCHANGE_HISTORY_DAYS. */
  historyDays: number | null;
  historySource: "exchange" | "config" | null;
  /** historyDays − days since the bills cursor: below 0, bills after the cursor are already beyond reach. */
  historyDaysLeft: number | null;
  /** Pages per incremental bills run, averaged over the last RUNS_AVERAGED (null: none finished). */
  requestsPerRun: number | null;
  runsAveraged: number;
}

export interface FleetPage {
  /** Accounts matching every filter (the page is a slice of them). */
  total: number;
  /** Per state, over the accounts matching the filters other than the state. */
  counts: Record<FleetState, number>;
  /** requestsPerRun summed over the accounts matching every filter. */
  requestsPerRun: number;
  accounts: FleetAccount[];
}

/** Every account name the database knows: registered, or with a cursor, a verify, quarantine or exchange facts. */
const ALL_NAMES = `SELECT name FROM accounts
  UNION SELECT DISTINCT account_name FROM sync_state
  UNION SELECT account_name FROM verify_state
  UNION SELECT account_name FROM quarantine
  UNION SELECT account_name FROM exchange_profiles`;

/** Failing first, then by lag (never synced first), disabled last; `t` qualifies the columns. */
const order = (t = "") => `${t}failing DESC, ${t}state = 'disabled', ${t}lag_ms DESC NULLS FIRST, ${t}name`;

// $1 status, $2 search, $3 names, $4 state, $5 limit, $6 offset, $7 now (ms), $8 stale after (ms),
// $9 configured history (ms), $10 accounts with failed jobs.
const fleetSql = (names: string) => `
WITH names(name) AS (${names}),
fleet AS (
  SELECT n.name, a.name IS NOT NULL AS registered, a.uid, a.status, a.coin_ids, a.bills_source,
         s.cursor_ms, s.updated_at,
         -- greatest() skips NULLs: without the CASE a never-synced account would read as no lag.
         CASE WHEN s.cursor_ms IS NOT NULL THEN greatest(0, $7::bigint - s.cursor_ms) END AS lag_ms,
         v.outcome AS verify, coalesce(v.failures, 0) AS verify_failures,
         coalesce(p.history_ms, $9::bigint) AS history_ms,
         CASE WHEN p.history_ms IS NOT NULL THEN 'exchange' WHEN $9::bigint IS NOT NULL THEN 'config' END
           AS history_source,
         (SELECT avg(x)::float8 FROM unnest(r.pages) x) AS requests, coalesce(cardinality(r.pages), 0) AS runs,
         r.last_outcome
  FROM names n
  LEFT JOIN accounts a ON a.name = n.name
  LEFT JOIN sync_state s ON s.account_name = n.name AND s.stream = 'bills'
  LEFT JOIN verify_state v ON v.account_name = n.name
  LEFT JOIN exchange_profiles p ON p.account_name = n.name
  LEFT JOIN bills_run_stats r ON r.account_name = n.name
  WHERE ($1::text IS NULL OR a.status = $1) AND ($2::text IS NULL OR strpos(lower(n.name), lower($2)) > 0)
    AND ($3::text[] IS NULL OR n.name = ANY($3))
),
reasoned AS (
  SELECT f.*, array_remove(ARRAY[
           CASE WHEN f.cursor_ms IS NULL THEN 'never synced' END,
           CASE WHEN f.verify = 'fail' THEN 'verify failed' END,
           CASE WHEN f.last_outcome = 'failed' THEN 'last bills run failed' END,
           CASE WHEN f.name = ANY($10::text[]) THEN 'failed jobs' END], NULL) AS reasons
  FROM fleet f
),
stated AS (
  SELECT r.*, (r.status IS DISTINCT FROM 'disabled' AND cardinality(r.reasons) > 0) AS failing,
         CASE WHEN r.status = 'disabled' THEN 'disabled' WHEN cardinality(r.reasons) > 0 THEN 'failing'
              WHEN r.lag_ms > $8::bigint THEN 'stale' ELSE 'fresh' END AS state
  FROM reasoned r
),
chosen AS (SELECT * FROM stated WHERE $4::text IS NULL OR state = $4),
summary AS (
  SELECT (SELECT count(*) FROM chosen)::int AS total,
         (SELECT coalesce(sum(requests), 0) FROM chosen)::float8 AS requests_total,
         count(*) FILTER (WHERE state = 'failing')::int AS n_failing,
         count(*) FILTER (WHERE state = 'stale')::int AS n_stale,
         count(*) FILTER (WHERE state = 'fresh')::int AS n_fresh,
         count(*) FILTER (WHERE state = 'disabled')::int AS n_disabled
  FROM stated
)
SELECT s.*, p.name, p.registered, p.uid, p.status, p.coin_ids, p.bills_source, p.cursor_ms, p.updated_at,
       p.lag_ms, p.verify, p.verify_failures, p.history_ms, p.history_source, p.requests, p.runs, p.reasons,
       p.failing, p.state, q.n AS quarantined
FROM summary s
LEFT JOIN LATERAL (SELECT * FROM chosen ORDER BY ${order()} LIMIT $5 OFFSET $6) p ON true
LEFT JOIN LATERAL (SELECT count(*)::int AS n FROM quarantine WHERE account_name = p.name) q ON true
ORDER BY ${order("p.")}`;

interface FleetRow {
  total: number;
  requests_total: number;
  n_failing: number;
  n_stale: number;
  n_fresh: number;
  n_disabled: number;
  name: string | null;
  registered: boolean;
  uid: string | null;
  status: string | null;
  coin_ids: string[] | null;
  bills_source: string | null;
  cursor_ms: bigint | null;
  updated_at: Date | null;
  lag_ms: bigint | null;
  verify: "pass" | "fail" | null;
  verify_failures: number;
  history_ms: bigint | null;
  history_source: "exchange" | "config" | null;
  requests: number | null;
  runs: number | null;
  reasons: FailingReason[];
  failing: boolean;
  state: FleetState;
  quarantined: number;
}

/** One page of the fleet, sorted and filtered as asked, with the totals of every page. */
export async function readFleet(db: Db, q: FleetQuery): Promise<FleetPage> {
  const historyMs = q.historyDays === undefined ? null : String(Math.round(q.historyDays * DAY_MS));
  // JIT off for this one statement: compiling its plan costs PostgreSQL many times what running it
  // does (docs/design/fleet-views.md). SET LOCAL ends with the transaction; a read-only session
  // allows it.
  const [, rows] = await db.$transaction([
    db.$executeRawUnsafe("SET LOCAL jit = off"),
    db.$queryRawUnsafe<FleetRow[]>(
      fleetSql(q.registeredOnly ? "SELECT name FROM accounts" : ALL_NAMES),
      q.status ?? null,
      q.search ?? null,
      q.names ?? null,
      q.state ?? null,
      q.limit,
      q.offset,
      String(q.nowMs ?? Date.now()),
      String(q.staleAfterMs ?? 900_000),
      historyMs,
      q.withFailedJobs ?? [],
    ),
  ]);
  const first = rows[0];
  return {
    total: first?.total ?? 0,
    counts: {
      failing: first?.n_failing ?? 0,
      stale: first?.n_stale ?? 0,
      fresh: first?.n_fresh ?? 0,
      disabled: first?.n_disabled ?? 0,
    },
    requestsPerRun: first?.requests_total ?? 0,
    accounts: rows.filter((r) => r.name !== null).map(fleetAccount),
  };
}

function fleetAccount(r: FleetRow): FleetAccount {
  const lagMs = r.lag_ms === null ? null : Number(r.lag_ms);
  const historyDays = r.history_ms === null ? null : Number(r.history_ms) / DAY_MS;
  return {
    name: r.name!,
    registered: r.registered,
    uid: r.uid,
    status: r.status as AccountStatus | null,
    coins: r.coin_ids ?? [],
    source: r.bills_source,
    cursorMs: r.cursor_ms === null ? null : Number(r.cursor_ms),
    lastSuccess: r.updated_at,
    lagSeconds: lagMs === null ? null : Math.floor(lagMs / 1000),
    verify: r.verify,
    verifyFailures: r.verify_failures,
    quarantined: r.quarantined,
    state: r.state,
    failing: r.failing,
    reasons: r.reasons,
    historyDays,
    historySource: r.history_source,
    historyDaysLeft: historyDays === null || lagMs === null ? null : historyDays - lagMs / DAY_MS,
    requestsPerRun: r.requests,
    runsAveraged: r.runs ?? 0,
  };
}

/** A registered account as `accounts list` shows it. */
export interface AccountOverview {
  name: string;
  uid: string;
  status: AccountStatus;
  coins: string[];
  source: string | null;
  /** When the bills cursor last moved (null: never synced). */
  lastSuccess: Date | null;
  /** Seconds the bills cursor is behind now (null: never synced). */
  lagSeconds: number | null;
  /** The worker's last incremental verify: pass | fail | null (not run). */
  verify: string | null;
  failing: boolean;
}

export interface OverviewQuery {
  status?: AccountStatus;
  /** Only accounts whose name contains this text, ignoring case. */
  search?: string;
  limit: number;
  offset: number;
}

/** `accounts list`: the registered accounts only, in the fleet's order. */
export async function readAccountOverview(
  db: Db,
  q: OverviewQuery,
): Promise<{ total: number; accounts: AccountOverview[] }> {
  const page = await readFleet(db, { ...q, registeredOnly: true });
  return {
    total: page.total,
    accounts: page.accounts.map((a) => ({
      name: a.name,
      uid: a.uid!,
      status: a.status!,
      coins: a.coins,
      source: a.source,
      lastSuccess: a.lastSuccess,
      lagSeconds: a.lagSeconds,
      verify: a.verify,
      failing: a.failing,
    })),
  };
}
