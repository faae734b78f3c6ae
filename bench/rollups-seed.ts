// The history the rollups item queries: one account's bills over a fixed two-year span, written in
// one statement (generate_series), so 10,000,000 bills load in minutes and the span (hence the
// number of rollup rows) is the same at every size. The mix is a trading account's: 80% opens and
// closes, 12% funding, the rest fee income, liquidations and transfers; USDT over eight symbols,
// one bill in ten in USDC; amounts of 2 to 6 decimals; raw about the size the exchange sends.
import type pg from "pg";

export const ACCOUNT = "bench";
export const SPAN_FROM_MS = Date.UTC(2024, 10, 1);
export const SPAN_TO_MS = Date.UTC(2026, 10, 1);

// Balances are not chained (v_balances only reads the latest bill of each coin, whatever it holds).
const SEED = `
INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
SELECT $1, id, coin, symbol, type, amount, balance, fee, timestamptz 'epoch' + t * interval '1 millisecond', t,
       jsonb_build_object('billId', id, 'coin', coin, 'symbol', symbol, 'businessType', type, 'amount', amount::text,
                          'balance', balance::text, 'fillFee', fee::text, 'cTime', t, 'transferReason', '')
FROM (
  SELECT id, coin, type, amount, t, round((g % 1000000) / 100.0, 2) AS balance,
         CASE WHEN type IN ('deposit', 'withdraw', 'transfer_in', 'transfer_out') THEN ''
              ELSE 'cmt_' || (ARRAY['btc', 'eth', 'sol', 'xrp', 'doge', 'bnb', 'ada', 'ltc'])[1 + (g * 31) % 8] || lower(coin) END AS symbol,
         CASE WHEN type LIKE 'position_open%' OR type LIKE 'position_close%' THEN round(-abs(amount) * 0.0006, 8) ELSE 0 END AS fee
  FROM (
    SELECT g, (1000000000000000000 + g)::text AS id,
           CASE WHEN g % 10 = 0 THEN 'USDC' ELSE 'USDT' END AS coin,
           CASE WHEN h < 20 THEN 'position_open_long' WHEN h < 40 THEN 'position_open_short'
                WHEN h < 60 THEN 'position_close_long' WHEN h < 80 THEN 'position_close_short'
                WHEN h < 92 THEN 'position_funding' WHEN h < 94 THEN 'order_fill_fee_income'
                WHEN h = 94 THEN 'start_liquidate' WHEN h = 95 THEN 'finish_liquidate'
                WHEN h = 96 THEN 'deposit' WHEN h = 97 THEN 'withdraw' WHEN h = 98 THEN 'transfer_in' ELSE 'transfer_out' END AS type,
           round((((g * 104729) % 2000001) - 1000000) / 1000.0, (2 + g % 5)::int) AS amount,
           $3::bigint + (g - 1) * ($4::bigint - $3::bigint) / $2::bigint AS t
    FROM generate_series(1::bigint, $2::bigint) g, LATERAL (SELECT (g * 7919) % 100 AS h) x
  ) a
) b`;

/**
 * Writes `count` bills of ACCOUNT across the span, then VACUUM ANALYZE: the table settled as
 * autovacuum would leave it, and no autovacuum of it running while queries are timed.
 */
export async function seedBills(client: pg.Client, count: number): Promise<void> {
  await client.query(SEED, [ACCOUNT, count, SPAN_FROM_MS, SPAN_TO_MS]);
  await client.query("VACUUM (ANALYZE) bills");
}
