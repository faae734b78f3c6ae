// The wallet check's tables (issue 26): readings of the exchange's reported balances waiting to be
// compared (wallet_readings), and each coin's latest compared reading with its result
// (wallet_checks). Amounts travel as exact decimal text.
import { Decimal } from "./numeric.ts";
import type { Db } from "./prisma.ts";

export type WalletSource = "collateral" | "v3-balance";
export type WalletStatus = "tied" | "not_tied" | "inconclusive";

/** One figure a reading offers; a collateral snapshot offers its main record and all records together. */
export interface ReportedFigure {
  label: string;
  amount: string;
}

/** One collateral record of a coin as a snapshot saw it. */
export interface CollateralAmount {
  key: string;
  /** Not an isolated position's record. */
  main: boolean;
  amount: string;
}

/**
 * The figures a coin's collateral offers for its balance: each main record, and all records together
 * when there are several (a lone isolated record stands for itself). The spec does not say which one
 * the bills' balance follows, so each is tried.
 */
export function collateralFigures(
  records: readonly CollateralAmount[],
  label = (key: string) => `collateral record ${key}`,
  together = "all collateral records together",
): ReportedFigure[] {
  const total = records.reduce((s, r) => s.plus(r.amount), new Decimal(0)).toFixed();
  return [
    ...records.filter((r) => r.main).map((r) => ({ label: label(r.key), amount: r.amount })),
    ...(records.length > 1 ? [{ label: together, amount: total }] : []),
    ...(records.length === 1 && !records[0]!.main ? [{ label: label(records[0]!.key), amount: total }] : []),
  ];
}

export interface WalletReading {
  account: string;
  /** The coin's name, as bills carry it. */
  coin: string;
  source: WalletSource;
  /** Our instant just before the exchange was asked (epoch ms). */
  observedAtMs: number;
  figures: ReportedFigure[];
}

export interface WalletResult {
  reading: WalletReading;
  status: WalletStatus;
  reported: string | null;
  calculated: string | null;
  difference: string | null;
  /** Where the difference arose: (fromMs, toMs]; null when tied or not narrowed. */
  window: { fromMs: number | null; toMs: number } | null;
  summary: string;
}

export interface StoredWalletCheck extends WalletResult {
  lastTiedAtMs: number | null;
  checkedAt: Date;
}

/** Pending readings kept per account, coin and source. */
export const MAX_PENDING = 100;

export async function recordReadings(db: Db, readings: WalletReading[]): Promise<void> {
  if (readings.length === 0) return;
  await db.$executeRawUnsafe(
    `INSERT INTO wallet_readings (account_name, coin, source, observed_at_ms, figures)
     SELECT r.account, r.coin, r.source, r.at::bigint, r.figures
     FROM jsonb_to_recordset($1::jsonb) AS r(account text, coin text, source text, at text, figures jsonb)
     ON CONFLICT DO NOTHING`,
    JSON.stringify(
      readings.map((r) => ({
        account: r.account,
        coin: r.coin,
        source: r.source,
        at: String(r.observedAtMs),
        figures: r.figures,
      })),
    ),
  );
  // While the bills stay behind (a failing account), readings wait: the newest few are enough.
  await db.$executeRawUnsafe(
    `DELETE FROM wallet_readings w USING (
       SELECT account_name, coin, source, observed_at_ms,
              row_number() OVER (PARTITION BY account_name, coin, source ORDER BY observed_at_ms DESC) AS n
       FROM wallet_readings WHERE account_name = ANY($1::text[])
     ) old
     WHERE old.n > ${MAX_PENDING} AND w.account_name = old.account_name AND w.coin = old.coin
       AND w.source = old.source AND w.observed_at_ms = old.observed_at_ms`,
    [...new Set(readings.map((r) => r.account))],
  );
}

export interface ReadingRow {
  coin: string;
  source: WalletSource;
  observed_at_ms: string;
  figures: ReportedFigure[];
}

export const toReading = (account: string, r: ReadingRow): WalletReading => ({
  account,
  coin: r.coin,
  source: r.source,
  observedAtMs: Number(r.observed_at_ms),
  figures: r.figures,
});

/** SQL of the account's readings not yet compared, oldest first; `account` is the SQL expression of its name. */
export const pendingReadingsSql = (account: string) =>
  `SELECT coin, source, observed_at_ms::text, figures FROM wallet_readings
   WHERE account_name = ${account} ORDER BY observed_at_ms, coin, source`;

/** Readings of the account not yet compared, oldest first. */
export async function pendingReadings(db: Db, account: string): Promise<WalletReading[]> {
  const rows = await db.$queryRawUnsafe<ReadingRow[]>(pendingReadingsSql("$1"), account);
  return rows.map((r) => toReading(account, r));
}

/**
 * SQL of newestReadings' rows; `account` and `maxAtMs` are SQL expressions (parameters, or another
 * statement's values when it embeds this one).
 */
export const newestReadingsSql = (account: string, maxAtMs: string): string =>
  `SELECT r.*, EXISTS (SELECT 1 FROM wallet_readings WHERE account_name = ${account})
                 OR EXISTS (SELECT 1 FROM wallet_checks WHERE account_name = ${account}) AS any_stored
     FROM (SELECT 1) one
     LEFT JOIN LATERAL (
       SELECT DISTINCT ON (coin, source) coin, source, observed_at_ms::text, figures FROM (
         SELECT coin, source, observed_at_ms, figures FROM wallet_readings WHERE account_name = ${account}
         UNION ALL
         SELECT coin, source, observed_at_ms, figures FROM wallet_checks WHERE account_name = ${account}
       ) r WHERE ${maxAtMs}::bigint IS NULL OR observed_at_ms <= ${maxAtMs}::bigint
       ORDER BY coin, source, observed_at_ms DESC
     ) r ON true`;

/**
 * The newest reading of each coin and source at or before `maxAtMs`: pending, or the one last
 * compared; and whether the account has any reading at all (so that "none that old" and "none yet"
 * are told apart in the same round trip).
 */
export async function newestReadings(
  db: Db,
  account: string,
  maxAtMs?: number,
): Promise<{ readings: WalletReading[]; anyStored: boolean }> {
  const rows = await db.$queryRawUnsafe<(Partial<ReadingRow> & { any_stored: boolean })[]>(
    newestReadingsSql("$1", "$2"),
    account,
    maxAtMs === undefined ? null : String(maxAtMs),
  );
  return {
    readings: rows
      .filter((r): r is ReadingRow & { any_stored: boolean } => r.coin != null)
      .map((r) => toReading(account, r)),
    anyStored: rows[0]?.any_stored ?? false,
  };
}

/**
 * Files compared readings in one transaction: each coin's newest result replaces its wallet_checks
 * row (last_tied_at_ms follows the newest tied reading), and the compared readings leave the queue.
 */
export async function settleReadings(db: Db, account: string, results: WalletResult[]): Promise<void> {
  if (results.length === 0) return;
  const newest = new Map<string, WalletResult>();
  const lastTied = new Map<string, number>();
  for (const r of results) {
    const key = `${r.reading.coin}\u0000${r.reading.source}`;
    const seen = newest.get(key);
    if (!seen || seen.reading.observedAtMs <= r.reading.observedAtMs) newest.set(key, r);
    if (r.status === "tied") lastTied.set(key, Math.max(lastTied.get(key) ?? 0, r.reading.observedAtMs));
  }
  const rows = [...newest.entries()].map(([key, r]) => ({
    coin: r.reading.coin,
    source: r.reading.source,
    at: String(r.reading.observedAtMs),
    figures: r.reading.figures,
    status: r.status,
    reported: r.reported,
    calculated: r.calculated,
    difference: r.difference,
    tied: lastTied.has(key) ? String(lastTied.get(key)) : null,
    wfrom: r.window?.fromMs == null ? null : String(r.window.fromMs),
    wto: r.window ? String(r.window.toMs) : null,
    summary: r.summary,
  }));
  const done = results.map((r) => ({
    coin: r.reading.coin,
    source: r.reading.source,
    at: String(r.reading.observedAtMs),
  }));
  await db.$transaction([
    db.$executeRawUnsafe(
      `INSERT INTO wallet_checks AS w
         (account_name, coin, source, observed_at_ms, figures, status, reported, calculated,
          difference, last_tied_at_ms, window_from_ms, window_to_ms, summary, checked_at)
       SELECT $1, r.coin, r.source, r.at::bigint, r.figures, r.status, r.reported::numeric, r.calculated::numeric,
              r.difference::numeric, r.tied::bigint, r.wfrom::bigint, r.wto::bigint, r.summary, now()
       FROM jsonb_to_recordset($2::jsonb) AS r(coin text, source text, at text, figures jsonb, status text,
            reported text, calculated text, difference text, tied text, wfrom text, wto text, summary text)
       ON CONFLICT (account_name, coin, source) DO UPDATE SET
         observed_at_ms = excluded.observed_at_ms, figures = excluded.figures, status = excluded.status,
         reported = excluded.reported, calculated = excluded.calculated, difference = excluded.difference,
         last_tied_at_ms = coalesce(excluded.last_tied_at_ms, w.last_tied_at_ms),
         window_from_ms = excluded.window_from_ms, window_to_ms = excluded.window_to_ms,
         summary = excluded.summary, checked_at = excluded.checked_at
       WHERE w.observed_at_ms <= excluded.observed_at_ms`,
      account,
      JSON.stringify(rows),
    ),
    db.$executeRawUnsafe(
      `DELETE FROM wallet_readings w USING jsonb_to_recordset($2::jsonb) AS d(coin text, source text, at text)
       WHERE w.account_name = $1 AND w.coin = d.coin AND w.source = d.source AND w.observed_at_ms = d.at::bigint`,
      account,
      JSON.stringify(done),
    ),
  ]);
}

/** When the coin's reported balance last tied (epoch ms), if it ever did. */
export async function lastTiedAtMs(
  db: Db,
  account: string,
  coin: string,
  source: WalletSource,
): Promise<number | null> {
  const [row] = await db.$queryRawUnsafe<{ ms: string | null }[]>(
    "SELECT last_tied_at_ms::text AS ms FROM wallet_checks WHERE account_name = $1 AND coin = $2 AND source = $3",
    account,
    coin,
    source,
  );
  return row?.ms ? Number(row.ms) : null;
}

/** Every coin's latest result, of one account or all. */
export async function readWalletChecks(db: Db, account?: string): Promise<(StoredWalletCheck & { account: string })[]> {
  const rows = await db.$queryRawUnsafe<
    (ReadingRow & {
      account_name: string;
      status: WalletStatus;
      reported: string | null;
      calculated: string | null;
      difference: string | null;
      last_tied_at_ms: string | null;
      window_from_ms: string | null;
      window_to_ms: string | null;
      summary: string;
      checked_at: Date;
    })[]
  >(
    `SELECT account_name, coin, source, observed_at_ms::text, figures, status, reported::text, calculated::text,
            difference::text, last_tied_at_ms::text, window_from_ms::text, window_to_ms::text, summary, checked_at
     FROM wallet_checks WHERE $1::text IS NULL OR account_name = $1 ORDER BY account_name, coin, source`,
    account ?? null,
  );
  return rows.map((r) => ({
    account: r.account_name,
    reading: toReading(r.account_name, r),
    status: r.status,
    reported: r.reported,
    calculated: r.calculated,
    difference: r.difference,
    window:
      r.window_to_ms === null
        ? null
        : { fromMs: r.window_from_ms === null ? null : Number(r.window_from_ms), toMs: Number(r.window_to_ms) },
    summary: r.summary,
    lastTiedAtMs: r.last_tied_at_ms === null ? null : Number(r.last_tied_at_ms),
    checkedAt: r.checked_at,
  }));
}
