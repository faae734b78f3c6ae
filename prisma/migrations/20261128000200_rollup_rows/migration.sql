-- daily_rollups with integer keys (issue 32, "a lean row"): the rows move to rollup_rows, keyed like
-- bill_rows (account_keys, bill_terms), and `daily_rollups` becomes a view of the same columns, so
-- BI queries and the views over it read as before. A rollup row was ~200 bytes with its indexes
-- (five texts in the row and again in its key); it is ~110 now. The day index becomes BRIN: rollup
-- rows are added in day order, so a fleet-wide month reads a few block ranges.
-- docs/design/bill-storage.md ("Rollups").

CREATE TABLE "rollup_rows" (
    "account_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "coin" INTEGER NOT NULL,
    "symbol" INTEGER,
    "business_type" INTEGER NOT NULL,
    "bills" INTEGER NOT NULL,
    "amount" NUMERIC NOT NULL,
    "fill_fee" NUMERIC NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_insert_scale_factor = 0.02);

-- Every name and term a rollup row holds has its key already (the rows came from bills, whose keys
-- the bill_rows migration made); any that does not gets one, so that no row is left behind.
SELECT count(ledger_sync_account_key(a)) FROM (SELECT DISTINCT account_name FROM daily_rollups) x(a);
SELECT count(ledger_sync_term_key(w)) FROM (
  SELECT coin FROM daily_rollups UNION SELECT symbol FROM daily_rollups WHERE symbol IS NOT NULL
  UNION SELECT business_type FROM daily_rollups
) x(w);

INSERT INTO rollup_rows (account_id, day, coin, symbol, business_type, bills, amount, fill_fee)
SELECT k.id, d.day, c.id, s.id, t.id, d.bills, d.amount, d.fill_fee
FROM daily_rollups d
JOIN account_keys k ON k.name = d.account_name
JOIN bill_terms c ON c.term = d.coin
LEFT JOIN bill_terms s ON s.term = d.symbol
JOIN bill_terms t ON t.term = d.business_type
ORDER BY d.day, k.id, c.id, s.id NULLS FIRST, t.id;

DO $$
DECLARE
  before bigint := (SELECT count(*) FROM daily_rollups);
  after bigint := (SELECT count(*) FROM rollup_rows);
BEGIN
  IF before <> after THEN
    RAISE EXCEPTION 'rollup_rows: % rows copied of daily_rollups'' %', after, before USING ERRCODE = 'data_corrupted';
  END IF;
END
$$;

CREATE UNIQUE INDEX "rollup_rows_key" ON "rollup_rows" ("account_id", "day", "coin", "symbol", "business_type")
  NULLS NOT DISTINCT;
CREATE INDEX "rollup_rows_day_brin" ON "rollup_rows" USING brin ("day");

-- The functions and views that named the table are made again over the new one.
DROP VIEW "v_daily_pnl", "v_fees", "v_funding";
DROP FUNCTION "ledger_sync_rollups_settle"(daily_rollups[]);
DROP TABLE "daily_rollups";

-- The BI contract (docs/schema.md): the columns daily_rollups always had.
CREATE VIEW "daily_rollups" AS
SELECT k.name AS account_name, r.day, c.term AS coin, s.term AS symbol, t.term AS business_type,
       ledger_sync_bill_category(t.term) AS category, r.bills::bigint AS bills, r.amount, r.fill_fee
FROM rollup_rows r
JOIN account_keys k ON k.id = r.account_id
JOIN bill_terms c ON c.id = r.coin
LEFT JOIN bill_terms s ON s.id = r.symbol
JOIN bill_terms t ON t.id = r.business_type;

-- The BI views, their text as before (migration 20261124212832_daily_rollups).
CREATE VIEW "v_daily_pnl" AS
SELECT account_name, coin, day, trading, funding, liquidation, trading + funding + liquidation AS realized_pnl, fill_fees, bills
FROM (
  SELECT
    account_name,
    coin,
    day,
    COALESCE(sum(amount) FILTER (WHERE category = 'trading'), 0) AS trading,
    COALESCE(sum(amount) FILTER (WHERE category = 'funding'), 0) AS funding,
    COALESCE(sum(amount) FILTER (WHERE category = 'liquidation'), 0) AS liquidation,
    COALESCE(sum(fill_fee) FILTER (WHERE category = 'trading'), 0) AS fill_fees,
    sum(bills)::bigint AS bills
  FROM daily_rollups
  GROUP BY account_name, coin, day
) d;

CREATE VIEW "v_funding" AS
SELECT account_name, coin, symbol, day, amount AS funding, bills AS settlements
FROM daily_rollups WHERE business_type = 'position_funding';

CREATE VIEW "v_fees" AS
SELECT account_name, coin, symbol, day,
  COALESCE(sum(fill_fee) FILTER (WHERE category = 'trading'), 0) AS fill_fees,
  COALESCE(sum(amount) FILTER (WHERE category = 'fee_income'), 0) AS fee_income
FROM daily_rollups
GROUP BY account_name, coin, symbol, day;

-- New bills add their sums: one statement per bills statement, on the keys bill_rows already holds.
CREATE OR REPLACE FUNCTION "ledger_sync_rollups_add"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO rollup_rows AS r (account_id, day, coin, symbol, business_type, bills, amount, fill_fee)
  SELECT n.account_id, (n.created_at AT TIME ZONE 'UTC')::date, n.coin, n.symbol, n.business_type,
         count(*), sum(n.amount), sum(n.fill_fee)
  FROM new_bills n
  GROUP BY 1, 2, 3, 4, 5
  ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (account_id, day, coin, symbol, business_type) DO UPDATE
    SET bills = r.bills + excluded.bills, amount = r.amount + excluded.amount, fill_fee = r.fill_fee + excluded.fill_fee;
  RETURN NULL;
END
$$;

-- Moves of sums: bills that changed day, coin, symbol, type or figures (sign -1 where they were,
-- +1 where they are), and deleted bills (-1).
CREATE FUNCTION "ledger_sync_rollups_settle"(moves rollup_rows[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rollup_rows AS r (account_id, day, coin, symbol, business_type, bills, amount, fill_fee)
  SELECT account_id, day, coin, symbol, business_type, sum(bills)::int, sum(amount), sum(fill_fee)
  FROM unnest(moves)
  GROUP BY 1, 2, 3, 4, 5
  ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (account_id, day, coin, symbol, business_type) DO UPDATE
    SET bills = r.bills + excluded.bills, amount = r.amount + excluded.amount,
        fill_fee = r.fill_fee + excluded.fill_fee;

  -- (Not a CHECK constraint: PostgreSQL checks the row an upsert proposes, here the bare delta.)
  IF EXISTS (SELECT FROM rollup_rows r JOIN unnest(moves) m
               ON r.account_id = m.account_id AND r.day = m.day AND r.coin = m.coin
              AND r.symbol IS NOT DISTINCT FROM m.symbol AND r.business_type = m.business_type
             WHERE r.bills < 0) THEN
    RAISE EXCEPTION 'daily_rollups counts fewer than no bills: it no longer matches bills'
      USING ERRCODE = 'data_corrupted',
            HINT = 'rebuild rollup_rows from bill_rows (docs/schema.md, "daily_rollups")';
  END IF;

  DELETE FROM rollup_rows r USING unnest(moves) m
  WHERE r.account_id = m.account_id AND r.day = m.day AND r.coin = m.coin
    AND r.symbol IS NOT DISTINCT FROM m.symbol AND r.business_type = m.business_type
    AND r.bills = 0;

  -- A sum keeps the scale of its bills: after a subtraction, the scale of those left.
  UPDATE rollup_rows r SET amount = round(r.amount, s.amount_scale), fill_fee = round(r.fill_fee, s.fee_scale)
  FROM (SELECT DISTINCT account_id, day, coin, symbol, business_type FROM unnest(moves)) k
  CROSS JOIN LATERAL (
    SELECT max(scale(b.amount)) AS amount_scale, max(scale(b.fill_fee)) AS fee_scale
    FROM bill_rows b
    WHERE b.account_id = k.account_id AND b.coin = k.coin AND b.business_type = k.business_type
      AND b.symbol IS NOT DISTINCT FROM k.symbol
      AND b.created_at >= k.day::timestamp AT TIME ZONE 'UTC'
      AND b.created_at < (k.day + 1)::timestamp AT TIME ZONE 'UTC'
  ) s
  WHERE r.account_id = k.account_id AND r.day = k.day AND r.coin = k.coin
    AND r.symbol IS NOT DISTINCT FROM k.symbol AND r.business_type = k.business_type;
END
$$;

CREATE OR REPLACE FUNCTION "ledger_sync_rollups_move"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  moves rollup_rows[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    WITH o AS (
      SELECT b.account_id, (b.created_at AT TIME ZONE 'UTC')::date AS day, b.coin, b.symbol, b.business_type,
             b.amount::text AS amount, b.fill_fee::text AS fill_fee
      FROM old_bills b
    ), n AS (
      SELECT b.account_id, (b.created_at AT TIME ZONE 'UTC')::date AS day, b.coin, b.symbol, b.business_type,
             b.amount::text AS amount, b.fill_fee::text AS fill_fee
      FROM new_bills b
    )
    SELECT array_agg(ROW(m.account_id, m.day, m.coin, m.symbol, m.business_type,
                         m.sign, m.sign * m.amount::numeric, m.sign * m.fill_fee::numeric)::rollup_rows)
    INTO moves
    FROM (
      SELECT -1 AS sign, * FROM (SELECT * FROM o EXCEPT ALL SELECT * FROM n) gone
      UNION ALL
      SELECT 1, * FROM (SELECT * FROM n EXCEPT ALL SELECT * FROM o) came
    ) m;
  ELSE
    SELECT array_agg(ROW(b.account_id, (b.created_at AT TIME ZONE 'UTC')::date, b.coin, b.symbol, b.business_type,
                         -1, -b.amount, -b.fill_fee)::rollup_rows)
    INTO moves
    FROM old_bills b;
  END IF;
  IF moves IS NOT NULL THEN
    PERFORM ledger_sync_rollups_settle(moves);
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION "ledger_sync_rollups_clear"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  DELETE FROM rollup_rows;
  RETURN NULL;
END
$$;
