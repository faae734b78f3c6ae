// Books as ledger-sync stored them before issue 32's bill_rows, for the upgrade's tests: a database
// migrated up to 20261126200000_run_leases, bills written straight into the old `bills` table (its
// triggers keep daily_rollups and file revisions as they did), and periods closed with the
// canonical form of src/periods/digest.ts.
import pg from "pg";
import { DIGEST_OF_LINES, LINE_SHA256, PERIOD_LINES } from "../../../src/periods/digest.ts";
import { migrateBefore } from "../../support/migrate-before.ts";

/** The last migration of the release before issue 32's storage: the schema upgraded. */
export const LAST_OLD_MIGRATION = "20261126200000_run_leases";

/** Applies the migrations of the release before the bills upgrade (up to 20261126200000_run_leases). */
export async function migrateToOldSchema(url: string): Promise<void> {
  await migrateBefore(url, LAST_OLD_MIGRATION, { through: true });
}

export async function withClient<T>(url: string, run: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export const MONTH_MS = (year: number, month: number) => Date.UTC(year, month - 1, 1);

// $1 account, $2 bills, $3 first ms, $4 step ms, $5 source ('v2' or 'v3'), $6 ids' offset. One bill in
// ten shares its millisecond with the one before (ledger order then goes by id); transfers have no
// symbol (NULL, and "" in a v2 raw as the exchange sent it) and a transfer reason; amounts keep
// their scale (1.500); one raw in seven has a field no column holds, one in eleven its amount as a
// JSON number; one bill in thirteen was last seen after it was first seen (before the no-rewrite
// rule); every 97th has an id beyond 2^64.
const GENERATE = `
INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
                   created_at_ms, raw, first_seen_at, last_seen_at, source, transfer_reason)
SELECT $1, id::text, coin, symbol, type, amount, balance, fee, timestamptz 'epoch' + ms * interval '1 millisecond', ms,
       CASE WHEN $5 = 'v2' THEN
         jsonb_build_object('billId', id::text, 'coin', coin, 'symbol', coalesce(symbol, ''), 'businessType', type,
                            'amount', CASE WHEN g % 11 = 0 THEN to_jsonb(amount) ELSE to_jsonb(amount::text) END,
                            'balance', balance::text, 'fillFee', fee::text, 'cTime', ms)
       ELSE
         jsonb_build_object('billId', id, 'asset', coin, 'symbol', symbol, 'incomeType', type, 'income', amount::text,
                            'balance', balance::text, 'fillFee', fee::text, 'time', ms)
       END
       || CASE WHEN reason IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('transferReason', reason) END
       || CASE WHEN g % 7 = 0 THEN jsonb_build_object('tradeId', 'T' || g, 'note', 'a % sign and "quotes"')
               ELSE '{}'::jsonb END,
       timestamptz 'epoch' + (ms + 20000) * interval '1 millisecond',
       timestamptz 'epoch' + (ms + 20000 + CASE WHEN g % 13 = 0 THEN 86400000 ELSE 0 END) * interval '1 millisecond',
       $5, reason
FROM (
  SELECT g, ms, coin, type,
         CASE WHEN g % 97 = 0 THEN 100000000000000000000000 + $6::numeric + g
              ELSE (ms - 1577836800000) * 4194304 + $6::numeric + g % 2 END AS id,
         CASE WHEN type LIKE 'transfer%' THEN NULL ELSE 'cmt_btc' || lower(coin) END AS symbol,
         CASE WHEN type LIKE 'transfer%' THEN 'user_transfer' END AS reason,
         amount, round(amount * 1000 + g, 4) AS balance,
         CASE WHEN type LIKE 'position_open%' THEN round(-abs(amount) * 0.0006, 6) ELSE 0.0 END AS fee
  FROM (
    SELECT g, $3::bigint + (g - CASE WHEN g % 10 = 5 THEN 1 ELSE 0 END) * $4::bigint AS ms,
           CASE WHEN g % 4 = 0 THEN 'USDC' ELSE 'USDT' END AS coin,
           (ARRAY['position_open_long', 'position_funding', 'transfer_in', 'position_close_short', 'transfer_out',
                  'position_open_short'])[1 + g % 6] AS type,
           round((((g * 7919) % 100000) - 50000) / 1000.0, (1 + g % 4)::int) AS amount
    FROM generate_series(1, $2::int) g
  ) s
) b`;

export interface OldAccount {
  name: string;
  bills: number;
  fromMs: number;
  stepMs: number;
  source: "v2" | "v3";
}

export async function insertOldBills(c: pg.ClientBase, a: OldAccount, idOffset = 0): Promise<void> {
  await c.query(GENERATE, [a.name, a.bills, a.fromMs, a.stepMs, a.source, idOffset]);
}

/** A bill's newer version, as the window write filed it: the old one goes to bill_revisions. */
export async function reviseBill(c: pg.ClientBase, account: string, billId: string): Promise<void> {
  await c.query("BEGIN");
  await c.query("SET LOCAL ledger_sync.revision = 'on'");
  await c.query(
    `UPDATE bills SET amount = amount + 1, raw = jsonb_set(raw, '{amount}', to_jsonb((amount + 1)::text)),
                      last_seen_at = last_seen_at + interval '1 hour'
     WHERE account_name = $1 AND bill_id = $2`,
    [account, billId],
  );
  await c.query("COMMIT");
}

/** Closes the month as `ledger-sync close` seals it (digest and lines; no figures); its digest. */
export async function closeMonth(c: pg.ClientBase, account: string, year: number, month: number): Promise<string> {
  const from = MONTH_MS(year, month);
  const to = MONTH_MS(year, month + 1);
  const period = `${year}-${String(month).padStart(2, "0")}`;
  const { rows } = await c.query<{ id: string; digest: string }>(
    `WITH lines AS (${PERIOD_LINES}),
          previous AS (SELECT max(p.id) AS id FROM period_closes p
                       WHERE p.account_name = $1 AND p.period_start_ms = $2::bigint AND p.period_end_ms = $3::bigint)
     INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                                bill_count, digest, figures, closed_by, supersedes)
     SELECT $1, $4, timestamptz 'epoch' + $2::bigint * interval '1 millisecond',
            timestamptz 'epoch' + $3::bigint * interval '1 millisecond', $2::bigint, $3::bigint,
            (SELECT count(*)::int FROM lines), (SELECT ${DIGEST_OF_LINES} FROM lines), '{}', 'auditor',
            (SELECT id FROM previous)
     RETURNING id::text, digest`,
    [account, String(from), String(to), period],
  );
  const close = rows[0]!;
  await c.query(
    `INSERT INTO period_close_bills (close_id, bill_id, line_sha256)
     SELECT $4::bigint, l.bill_id, ${LINE_SHA256} FROM (${PERIOD_LINES}) l`,
    [account, String(from), String(to), close.id],
  );
  return close.digest;
}

/** The digest of the period as the bills (table or view) give it now. */
export async function digestNow(c: pg.ClientBase, account: string, year: number, month: number): Promise<string> {
  const { rows } = await c.query<{ digest: string }>(`SELECT ${DIGEST_OF_LINES} AS digest FROM (${PERIOD_LINES}) l`, [
    account,
    String(MONTH_MS(year, month)),
    String(MONTH_MS(year, month + 1)),
  ]);
  return rows[0]!.digest;
}

/** Every bill, each column as text (raw as jsonb's text), in a stable order. */
export const ALL_BILLS = `
SELECT account_name, bill_id::text AS bill_id, coin, symbol, business_type, amount::text AS amount,
       balance::text AS balance, fill_fee::text AS fill_fee, created_at, created_at_ms::text AS created_at_ms,
       raw, raw::text AS raw_text, first_seen_at, last_seen_at, source, transfer_reason
FROM bills
ORDER BY account_name, created_at_ms, bill_id::numeric`;

export const ALL_ROLLUPS = `
SELECT account_name, day::text, coin, symbol, business_type, category, bills::text, amount::text, fill_fee::text
FROM daily_rollups
ORDER BY account_name, day, coin, symbol NULLS FIRST, business_type`;

export const ALL_REVISIONS = `
SELECT account_name, bill_id, coin, symbol, business_type, amount::text, balance::text, fill_fee::text, created_at,
       created_at_ms::text, raw::text, first_seen_at, replaced_at, transfer_reason
FROM bill_revisions
ORDER BY id`;
