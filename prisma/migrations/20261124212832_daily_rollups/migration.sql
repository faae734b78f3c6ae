-- CreateTable
CREATE TABLE "daily_rollups" (
    "account_name" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "coin" TEXT NOT NULL,
    "symbol" TEXT NOT NULL,
    "business_type" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "bills" BIGINT NOT NULL,
    "amount" DECIMAL NOT NULL,
    "fill_fee" DECIMAL NOT NULL,

    CONSTRAINT "daily_rollups_pkey" PRIMARY KEY ("account_name","day","coin","symbol","business_type")
);

-- CreateIndex
CREATE INDEX "daily_rollups_day_idx" ON "daily_rollups"("day");


-- ---- Hand-written (Prisma's schema language does not describe functions, triggers or views) ----
-- Issue 19, fast rollups: daily_rollups holds the count, Σ amount and Σ fill_fee of the bills of
-- each account, UTC day, coin, symbol and business type, and the BI views read it instead of
-- grouping every bill. Design and figures: docs/design/rollups.md.

-- The views' reading of a business type, stored with each row so that they compare one short
-- text per row instead of lists of types (docs/design/rollups.md).
CREATE FUNCTION "ledger_sync_bill_category"(business_type text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN business_type IN ('position_open_long', 'position_open_short', 'position_close_long', 'position_close_short') THEN 'trading'
    WHEN business_type = 'position_funding' THEN 'funding'
    WHEN business_type IN ('start_liquidate', 'finish_liquidate', 'order_fix_margin_amount') THEN 'liquidation'
    WHEN business_type IN ('order_fill_fee_income', 'order_liquidate_fee_income') THEN 'fee_income'
    ELSE 'other'
  END
$$;

ALTER TABLE "daily_rollups" ADD CONSTRAINT "daily_rollups_category_of_type"
  CHECK ("category" = ledger_sync_bill_category("business_type"));

-- New bills add their sums: one statement per bills statement, whatever wrote it (the window
-- write, a repair, any future path), so the rollup commits or rolls back with the bills. Deltas
-- through ON CONFLICT DO UPDATE: two transactions adding to the same row both count. Rows are
-- taken in key order, so two writers lock them in the same order and do not deadlock. Adding
-- keeps sum()'s scale: the largest scale of the amounts summed.
-- The trigger functions run as the tables' owner (SECURITY DEFINER, with a fixed search_path): the
-- worker's role needs no grant on daily_rollups (docs/security.md), so it cannot write it but
-- through bills.
CREATE FUNCTION "ledger_sync_rollups_add"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  INSERT INTO daily_rollups AS r (account_name, day, coin, symbol, business_type, category, bills, amount, fill_fee)
  SELECT account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type, ledger_sync_bill_category(business_type),
         count(*), sum(amount), sum(fill_fee)
  FROM new_bills
  GROUP BY 1, 2, 3, 4, 5
  ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (account_name, day, coin, symbol, business_type) DO UPDATE
    SET bills = r.bills + excluded.bills, amount = r.amount + excluded.amount, fill_fee = r.fill_fee + excluded.fill_fee;
  RETURN NULL;
END
$$;

-- Changed or removed bills: each old version moves its contribution out, each new one in (a bill
-- whose day, coin, symbol or type changed moves between rows). Versions compare as text, so that a
-- change of scale alone counts too; a re-read that changed nothing moves nothing.
CREATE FUNCTION "ledger_sync_rollups_move"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  moves daily_rollups[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    SELECT array_agg(ROW(m.account_name, m.day, m.coin, m.symbol, m.business_type, ledger_sync_bill_category(m.business_type),
                         m.sign, m.sign * m.amount::numeric, m.sign * m.fill_fee::numeric)::daily_rollups)
    INTO moves
    FROM (
      SELECT -1 AS sign, * FROM (
        SELECT account_name, (created_at AT TIME ZONE 'UTC')::date AS day, coin, symbol, business_type, amount::text, fill_fee::text FROM old_bills
        EXCEPT ALL
        SELECT account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type, amount::text, fill_fee::text FROM new_bills) gone
      UNION ALL
      SELECT 1, * FROM (
        SELECT account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type, amount::text, fill_fee::text FROM new_bills
        EXCEPT ALL
        SELECT account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type, amount::text, fill_fee::text FROM old_bills) came
    ) m;
  ELSE
    SELECT array_agg(ROW(account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type, ledger_sync_bill_category(business_type),
                         -1, -amount, -fill_fee)::daily_rollups)
    INTO moves
    FROM old_bills;
  END IF;
  IF moves IS NOT NULL THEN
    PERFORM ledger_sync_rollups_settle(moves);
  END IF;
  RETURN NULL;
END
$$;

-- Applies moves (rows of signed deltas) in key order. Then, in later statements, each of which
-- (under READ COMMITTED) sees every transaction that wrote these rows before this one locked them:
-- removes the rows left with no bill, and gives each sum touched the scale that sum() over its
-- bills has now. A subtraction keeps the scale of what left ("3.50000000" where sum() says
-- "3.50"); the value is exact, so rounding to the largest scale of the bills left drops only zeros.
-- Called by ledger_sync_rollups_move, it runs as the owner; called directly, as its caller, who
-- (the owner aside) has no grant to write daily_rollups.
CREATE FUNCTION "ledger_sync_rollups_settle"(moves daily_rollups[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO daily_rollups AS r (account_name, day, coin, symbol, business_type, category, bills, amount, fill_fee)
  SELECT account_name, day, coin, symbol, business_type, category, sum(bills)::bigint, sum(amount), sum(fill_fee)
  FROM unnest(moves)
  GROUP BY 1, 2, 3, 4, 5, 6
  ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (account_name, day, coin, symbol, business_type) DO UPDATE
    SET bills = r.bills + excluded.bills, amount = r.amount + excluded.amount, fill_fee = r.fill_fee + excluded.fill_fee;

  -- (Not a CHECK constraint: PostgreSQL checks the row an upsert proposes, here the bare delta.)
  IF EXISTS (SELECT FROM daily_rollups r JOIN unnest(moves) m USING (account_name, day, coin, symbol, business_type) WHERE r.bills < 0) THEN
    RAISE EXCEPTION 'daily_rollups counts fewer than no bills: it no longer matches bills'
      USING ERRCODE = 'data_corrupted',
            HINT = 'rebuild it from bills with the INSERT ... SELECT ... GROUP BY of the daily_rollups migration';
  END IF;

  DELETE FROM daily_rollups r USING unnest(moves) m
  WHERE (r.account_name, r.day, r.coin, r.symbol, r.business_type) = (m.account_name, m.day, m.coin, m.symbol, m.business_type)
    AND r.bills = 0;

  UPDATE daily_rollups r SET amount = round(r.amount, s.amount_scale), fill_fee = round(r.fill_fee, s.fee_scale)
  FROM (SELECT DISTINCT account_name, day, coin, symbol, business_type FROM unnest(moves)) k
  CROSS JOIN LATERAL (
    SELECT max(scale(b.amount)) AS amount_scale, max(scale(b.fill_fee)) AS fee_scale
    FROM bills b
    WHERE b.account_name = k.account_name AND b.coin = k.coin AND b.business_type = k.business_type AND b.symbol = k.symbol
      AND b.created_at >= k.day::timestamp AT TIME ZONE 'UTC' AND b.created_at < (k.day + 1)::timestamp AT TIME ZONE 'UTC'
  ) s
  WHERE (r.account_name, r.day, r.coin, r.symbol, r.business_type) = (k.account_name, k.day, k.coin, k.symbol, k.business_type);
END
$$;

-- A TRUNCATE (refused by bills_no_truncate, except where triggers are off) leaves no bill to sum.
CREATE FUNCTION "ledger_sync_rollups_clear"() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  DELETE FROM daily_rollups;
  RETURN NULL;
END
$$;

-- No bill may be written between the back-fill's snapshot and the triggers: writers wait until
-- this migration commits (readers do not).
LOCK TABLE "bills" IN SHARE ROW EXCLUSIVE MODE;

-- In key order, as the triggers will add days: the views group neighbouring rows faster.
INSERT INTO daily_rollups (account_name, day, coin, symbol, business_type, category, bills, amount, fill_fee)
SELECT account_name, (created_at AT TIME ZONE 'UTC')::date, coin, symbol, business_type, ledger_sync_bill_category(business_type),
       count(*), sum(amount), sum(fill_fee)
FROM bills
GROUP BY 1, 2, 3, 4, 5
ORDER BY 1, 2, 3, 4, 5;

CREATE TRIGGER "bills_rollups_insert" AFTER INSERT ON "bills" REFERENCING NEW TABLE AS new_bills
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_rollups_add"();
CREATE TRIGGER "bills_rollups_update" AFTER UPDATE ON "bills" REFERENCING OLD TABLE AS old_bills NEW TABLE AS new_bills
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_rollups_move"();
CREATE TRIGGER "bills_rollups_delete" AFTER DELETE ON "bills" REFERENCING OLD TABLE AS old_bills
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_rollups_move"();
CREATE TRIGGER "bills_rollups_truncate" AFTER TRUNCATE ON "bills"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_rollups_clear"();
-- The rollups follow bills even under session_replication_role = replica, the one way a superuser
-- changes bills past bills_guard (to undo damage by hand, or a test's deliberate corruption): did
-- they not, the bill's later repair would count it twice. (So a logical-replication subscriber
-- subscribes to bills, not to daily_rollups: its own triggers keep its rollups.)
ALTER TABLE "bills" ENABLE ALWAYS TRIGGER "bills_rollups_insert";
ALTER TABLE "bills" ENABLE ALWAYS TRIGGER "bills_rollups_update";
ALTER TABLE "bills" ENABLE ALWAYS TRIGGER "bills_rollups_delete";
ALTER TABLE "bills" ENABLE ALWAYS TRIGGER "bills_rollups_truncate";

-- The BI views keep their names, columns and types (CREATE OR REPLACE refuses any change to them,
-- and keeps their grants), now over daily_rollups: a day filter reaches its indexes through the
-- GROUP BY. realized_pnl is the sum of its three parts: the same digits, scale included, as one
-- sum() over their bills.
CREATE OR REPLACE VIEW "v_daily_pnl" AS
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

-- One rollup row per account, coin, symbol and day of funding: nothing left to group.
CREATE OR REPLACE VIEW "v_funding" AS
SELECT account_name, coin, symbol, day, amount AS funding, bills AS settlements
FROM daily_rollups WHERE business_type = 'position_funding';

CREATE OR REPLACE VIEW "v_fees" AS
SELECT account_name, coin, symbol, day,
  COALESCE(sum(fill_fee) FILTER (WHERE category = 'trading'), 0) AS fill_fees,
  COALESCE(sum(amount) FILTER (WHERE category = 'fee_income'), 0) AS fee_income
FROM daily_rollups
GROUP BY account_name, coin, symbol, day;

-- Latest balance per account and coin in ledger order (created_at, then bill_id as a number), from
-- the index on (account_name, coin, business_type, created_at): the (account, coin, type) keys are
-- found by skipping through it, one probe each, and each key's latest bill is the first entry of
-- its range (ties on created_at sorted by bill id). The cost follows the number of keys, not of bills.
CREATE OR REPLACE VIEW "v_balances" AS
WITH RECURSIVE keys AS (
  (SELECT account_name, coin, business_type FROM bills ORDER BY account_name, coin, business_type LIMIT 1)
  UNION ALL
  SELECT n.account_name, n.coin, n.business_type
  FROM keys k
  CROSS JOIN LATERAL (
    SELECT b.account_name, b.coin, b.business_type FROM bills b
    WHERE (b.account_name, b.coin, b.business_type) > (k.account_name, k.coin, k.business_type)
    ORDER BY b.account_name, b.coin, b.business_type LIMIT 1
  ) n
)
SELECT DISTINCT ON (k.account_name, k.coin) k.account_name, k.coin, l.balance, l.created_at AS as_of, l.bill_id
FROM keys k
CROSS JOIN LATERAL (
  SELECT b.balance, b.created_at, b.bill_id FROM bills b
  WHERE b.account_name = k.account_name AND b.coin = k.coin AND b.business_type = k.business_type
  ORDER BY b.created_at DESC, b.bill_id::numeric DESC LIMIT 1
) l
ORDER BY k.account_name, k.coin, l.created_at DESC, l.bill_id::numeric DESC;
