-- BI views (hand-written: Prisma's schema language does not describe views). Amounts are in the
-- bill's coin; days are UTC calendar days of the bill's creation time. Documented in docs/schema.md.

-- Realized results per account, coin and day. The exchange books collateral changes: opening a
-- position moves collateral one way, closing it the other; their sum over a round trip is the
-- realized trading result. Fees are inside those amounts (fill_fee reports them separately).
CREATE VIEW "v_daily_pnl" AS
SELECT
  account_name,
  coin,
  (created_at AT TIME ZONE 'UTC')::date AS day,
  COALESCE(sum(amount) FILTER (WHERE business_type IN ('position_open_long', 'position_open_short', 'position_close_long', 'position_close_short')), 0) AS trading,
  COALESCE(sum(amount) FILTER (WHERE business_type = 'position_funding'), 0) AS funding,
  COALESCE(sum(amount) FILTER (WHERE business_type IN ('start_liquidate', 'finish_liquidate', 'order_fix_margin_amount')), 0) AS liquidation,
  COALESCE(sum(amount) FILTER (WHERE business_type IN ('position_open_long', 'position_open_short', 'position_close_long', 'position_close_short', 'position_funding', 'start_liquidate', 'finish_liquidate', 'order_fix_margin_amount')), 0) AS realized_pnl,
  COALESCE(sum(fill_fee) FILTER (WHERE business_type IN ('position_open_long', 'position_open_short', 'position_close_long', 'position_close_short')), 0) AS fill_fees,
  count(*) AS bills
FROM bills
GROUP BY account_name, coin, (created_at AT TIME ZONE 'UTC')::date;

-- Funding settlements per account, coin, symbol and day.
CREATE VIEW "v_funding" AS
SELECT account_name, coin, symbol, (created_at AT TIME ZONE 'UTC')::date AS day, sum(amount) AS funding, count(*) AS settlements
FROM bills WHERE business_type = 'position_funding'
GROUP BY account_name, coin, symbol, (created_at AT TIME ZONE 'UTC')::date;

-- Fees paid (fill_fee of trades) and fee income, per account, coin, symbol and day.
CREATE VIEW "v_fees" AS
SELECT account_name, coin, symbol, (created_at AT TIME ZONE 'UTC')::date AS day,
  COALESCE(sum(fill_fee) FILTER (WHERE business_type IN ('position_open_long', 'position_open_short', 'position_close_long', 'position_close_short')), 0) AS fill_fees,
  COALESCE(sum(amount) FILTER (WHERE business_type IN ('order_fill_fee_income', 'order_liquidate_fee_income')), 0) AS fee_income
FROM bills
GROUP BY account_name, coin, symbol, (created_at AT TIME ZONE 'UTC')::date;

-- Money in and out of the account: one row per deposit, withdrawal or transfer.
CREATE VIEW "v_transfers" AS
SELECT account_name, coin, business_type, amount, balance, created_at, bill_id
FROM bills WHERE business_type IN ('deposit', 'withdraw', 'transfer_in', 'transfer_out');

-- Latest balance per account and coin (ledger order within a millisecond follows the bill id).
CREATE VIEW "v_balances" AS
SELECT DISTINCT ON (account_name, coin) account_name, coin, balance, created_at AS as_of, bill_id
FROM bills
ORDER BY account_name, coin, created_at DESC, bill_id::numeric DESC;

-- Positions open as of the latest snapshot.
CREATE VIEW "v_positions_open" AS
SELECT account_name, position_id, coin_id, contract_id, side, margin_mode, leverage, size, open_value, open_fee, funding_fee,
       isolated_margin, created_time, updated_time, last_seen_at
FROM positions_current WHERE closed_at IS NULL;
