// A fleet of accounts for the fleet views (status, the console's accounts page) and their bench
// item: every state, registered accounts and accounts known only by their rows, learnt and
// unknown history depths, failed runs, quarantine. The spec is plain data, so a test can derive
// the expected order from it by the documented rule, independently of the SQL; the rows are
// written in one statement per table (generate_series over the spec's arrays), so 1,000 accounts
// load in seconds.

export const DAY_MS = 86_400_000;
/** An instant to seed the fleet at and read it from, for tests that compare lags exactly. */
export const FLEET_NOW_MS = Date.UTC(2026, 9, 1, 12);
export const STALE_AFTER_MS = 900_000;
export const NINETY_DAYS_MS = 90 * DAY_MS;

export interface SpecAccount {
  name: string;
  registered: boolean;
  disabled: boolean;
  /** Bills cursor's lag behind FLEET_NOW_MS; null: never synced (no bills cursor). */
  lagMs: number | null;
  verify: "pass" | "fail" | null;
  /** The newest bills run failed (the older ones were ok). */
  lastRunFailed: boolean;
  /** exchange_profiles.history_ms; null: not learnt. */
  historyMs: number | null;
  quarantined: number;
}

const pad = (i: number) => String(i).padStart(4, "0");

/** `n` accounts, acct-0000 onwards, their properties cycling with different periods. */
export function fleetSpec(n: number): SpecAccount[] {
  return Array.from({ length: n }, (_, i) => {
    const registered = i % 2 === 0;
    return {
      name: `acct-${pad(i)}`,
      registered,
      disabled: registered && i % 10 === 4,
      lagMs: i % 15 === 7 ? null : i % 6 === 1 ? 3_600_000 + i * 60_000 : 5_000 + (i % 600) * 997,
      verify: i % 13 === 5 ? "fail" : i % 3 === 0 ? null : "pass",
      lastRunFailed: i % 11 === 3,
      historyMs: i % 4 === 0 ? NINETY_DAYS_MS : null,
      quarantined: i % 9 === 2 ? 1 : 0,
    };
  });
}

/** Pages of run r (0 = oldest) of account i: 1 to 7, so averages differ. */
export const runPages = (i: number, r: number) => 1 + (i % 5) + (r % 3);

/** The state the documented rule gives (failing reasons other than failed jobs). */
export function expectedState(a: SpecAccount): "failing" | "stale" | "fresh" | "disabled" {
  if (a.disabled) return "disabled";
  if (a.lagMs === null || a.verify === "fail" || a.lastRunFailed) return "failing";
  return a.lagMs > STALE_AFTER_MS ? "stale" : "fresh";
}

/** Failing first, then by lag (never synced first), disabled last, then by name. */
export function expectedOrder(spec: SpecAccount[]): string[] {
  const key = (a: SpecAccount) => [
    expectedState(a) === "failing" ? 0 : 1,
    a.disabled ? 1 : 0,
    a.lagMs === null ? -Infinity : -a.lagMs,
  ];
  return [...spec]
    .sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      for (let k = 0; k < x.length; k++) if (x[k] !== y[k]) return x[k]! < y[k]! ? -1 : 1;
      return a.name < b.name ? -1 : 1;
    })
    .map((a) => a.name);
}

export interface SeedSizes {
  /** Finished bills runs per account (sync_runs), plus a fifth as many snapshot runs. */
  runs: number;
  /** Finished backfill windows per account (their own sync_state rows). */
  backfillWindows: number;
  /** Days of daily_rollups per account (three business types a day). */
  rollupDays: number;
  /** The cursors' lags are measured back from here (default FLEET_NOW_MS). */
  nowMs?: number;
}

/** Anything that runs one statement with parameters: a pg.Client, or a Prisma client wrapped. */
export interface Sql {
  query(sql: string, params: unknown[]): Promise<unknown>;
}

const REPORT = JSON.stringify({
  checks: [
    { check: "balance-continuity", subject: "USDT", status: "pass", summary: "1000 bills chain" },
    { check: "quarantine", subject: "all", status: "pass", summary: "0 records" },
    { check: "cursor-lag", subject: "bills", status: "pass", summary: "within the lookback" },
  ],
});

/**
 * Writes the fleet's rows as of `sizes.nowMs`. Lags below STALE_AFTER_MS are at most 10 minutes and
 * the others at least an hour, so a fleet seeded at the real now reads in the same states for
 * minutes afterwards.
 */
export async function seedFleet(sql: Sql, spec: SpecAccount[], sizes: SeedSizes): Promise<void> {
  const now = String(sizes.nowMs ?? FLEET_NOW_MS);
  const registered = spec.filter((a) => a.registered);
  await sql.query(
    `INSERT INTO accounts (name, uid, status, coin_ids, master_key_id, wrapped_key, sealed_credentials)
     SELECT name, 'uid-' || name, status, ARRAY['2'], 'test-key', '\\x00'::bytea, '\\x00'::bytea
     FROM unnest($1::text[], $2::text[]) AS r(name, status)`,
    [registered.map((a) => a.name), registered.map((a) => (a.disabled ? "disabled" : "active"))],
  );
  const synced = spec.map((a, i) => ({ a, i })).filter(({ a }) => a.lagMs !== null);
  await sql.query(
    `INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at)
     SELECT name, stream, $3::bigint - lag, to_timestamp(($3::bigint - lag) / 1000.0)
     FROM unnest($1::text[], $2::bigint[]) AS r(name, lag)
     CROSS JOIN unnest(ARRAY['bills', 'snapshots:2']) AS s(stream)
     UNION ALL
     SELECT name, 'bills-backfill:' || w || '-' || (w + 1), w + 1, to_timestamp($3::bigint / 1000.0)
     FROM unnest($1::text[]) AS r(name) CROSS JOIN generate_series(1, $4::int) AS w`,
    [synced.map(({ a }) => a.name), synced.map(({ a }) => String(a.lagMs)), now, sizes.backfillWindows],
  );
  const verified = spec.filter((a) => a.verify !== null);
  await sql.query(
    `INSERT INTO verify_state (account_name, check_from_ms, last_run_at, outcome, failures, report)
     SELECT name, $3::bigint, to_timestamp($3::bigint / 1000.0), outcome,
            CASE WHEN outcome = 'fail' THEN 2 ELSE 0 END, $4::jsonb
     FROM unnest($1::text[], $2::text[]) AS r(name, outcome)`,
    [verified.map((a) => a.name), verified.map((a) => a.verify), now, REPORT],
  );
  const learnt = spec.filter((a) => a.historyMs !== null);
  await sql.query(
    `INSERT INTO exchange_profiles (account_name, history_ms) SELECT * FROM unnest($1::text[], $2::bigint[])`,
    [learnt.map((a) => a.name), learnt.map((a) => String(a.historyMs))],
  );
  const quarantined = spec.filter((a) => a.quarantined > 0);
  await sql.query(
    `INSERT INTO quarantine (account_name, stream, reason, raw_text, raw_hash, context)
     SELECT name, 'bills', 'amount: not a decimal', '{}', 'h-' || name, '{}' FROM unnest($1::text[]) AS r(name)`,
    [quarantined.map((a) => a.name)],
  );
  // Runs a minute apart, the newest a minute before now; the newest fails where the spec says so.
  await sql.query(
    `INSERT INTO sync_runs (account_name, stream, pages, started_at, finished_at, outcome, error)
     SELECT r.name, 'bills', 1 + (r.i % 5) + (g.n % 3), t, t + interval '2 seconds',
            CASE WHEN g.n = $4::int - 1 AND r.failed THEN 'failed' ELSE 'ok' END,
            CASE WHEN g.n = $4::int - 1 AND r.failed THEN 'exchange refused the request' END
     FROM unnest($1::text[], $2::int[], $3::boolean[]) AS r(name, i, failed)
     CROSS JOIN generate_series(0, $4::int - 1) AS g(n)
     CROSS JOIN LATERAL (SELECT to_timestamp($5::bigint / 1000.0) - ($4::int - g.n) * interval '1 minute' AS t) x
     UNION ALL
     SELECT r.name, 'snapshots', 4, t, t + interval '1 second', 'ok', NULL
     FROM unnest($1::text[]) AS r(name)
     CROSS JOIN generate_series(1, $4::int / 5) AS g(n)
     CROSS JOIN LATERAL (SELECT to_timestamp($5::bigint / 1000.0) - g.n * interval '5 minutes' AS t) x`,
    [synced.map(({ a }) => a.name), synced.map(({ i }) => i), synced.map(({ a }) => a.lastRunFailed), sizes.runs, now],
  );
  if (sizes.rollupDays > 0)
    await sql.query(
      `INSERT INTO rollup_rows (account_id, day, coin, symbol, business_type, bills, amount, fill_fee)
       SELECT ledger_sync_account_key(name), ($2::date - d), ledger_sync_term_key('USDT'),
              ledger_sync_term_key('cmt_btcusdt'), ledger_sync_term_key(t), 10 + d % 7, d * 1.25, d * 0.01
       FROM unnest($1::text[]) AS r(name)
       CROSS JOIN generate_series(1, $3::int) AS d
       CROSS JOIN unnest(ARRAY['position_open_long', 'position_close_long', 'position_funding']) AS b(t)`,
      [synced.map(({ a }) => a.name), new Date(Number(now)).toISOString().slice(0, 10), sizes.rollupDays],
    );
}
