-- Issue 26: a bill that belongs to no contract (a deposit, withdrawal or transfer) has symbol NULL,
-- whichever endpoint stored it and whether the exchange sent null, nothing or "" (docs/schema.md).

-- AlterTable
ALTER TABLE "bill_revisions" ALTER COLUMN "symbol" DROP NOT NULL;

-- AlterTable
ALTER TABLE "bills" ALTER COLUMN "symbol" DROP NOT NULL;

-- AlterTable
ALTER TABLE "daily_rollups" DROP CONSTRAINT "daily_rollups_pkey",
ALTER COLUMN "symbol" DROP NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "daily_rollups_key" ON "daily_rollups"("account_name", "day", "coin", "symbol", "business_type")
  NULLS NOT DISTINCT;


-- ---- Hand-written (Prisma's schema language has no NULLS NOT DISTINCT, functions or triggers) ----
-- daily_rollups keeps one row per account, day, coin, symbol and type with symbol NULL among them:
-- a primary key cannot hold a NULL, a unique index NULLS NOT DISTINCT (PostgreSQL 15+) can, and it
-- is the arbiter of the rollup functions' ON CONFLICT (account_name, day, coin, symbol, business_type).
-- ledger_sync_rollups_add and ledger_sync_rollups_move stay as they are: the first infers that index,
-- the second compares versions with EXCEPT ALL, for which NULL equals NULL. The settle function
-- compared keys with "=", for which NULL equals nothing: it is replaced whole, symbol compared with
-- IS NOT DISTINCT FROM (the other key columns keep "=", so the indexes still serve the lookups).
CREATE OR REPLACE FUNCTION "ledger_sync_rollups_settle"(moves daily_rollups[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO daily_rollups AS r
    (account_name, day, coin, symbol, business_type, category, bills, amount, fill_fee)
  SELECT account_name, day, coin, symbol, business_type, category, sum(bills)::bigint, sum(amount), sum(fill_fee)
  FROM unnest(moves)
  GROUP BY 1, 2, 3, 4, 5, 6
  ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (account_name, day, coin, symbol, business_type) DO UPDATE
    SET bills = r.bills + excluded.bills, amount = r.amount + excluded.amount,
        fill_fee = r.fill_fee + excluded.fill_fee;

  -- (Not a CHECK constraint: PostgreSQL checks the row an upsert proposes, here the bare delta.)
  IF EXISTS (SELECT FROM daily_rollups r JOIN unnest(moves) m
               ON r.account_name = m.account_name AND r.day = m.day AND r.coin = m.coin
              AND r.symbol IS NOT DISTINCT FROM m.symbol AND r.business_type = m.business_type
             WHERE r.bills < 0) THEN
    RAISE EXCEPTION 'daily_rollups counts fewer than no bills: it no longer matches bills'
      USING ERRCODE = 'data_corrupted',
            HINT = 'rebuild it from bills with the INSERT ... SELECT ... GROUP BY of the daily_rollups migration';
  END IF;

  DELETE FROM daily_rollups r USING unnest(moves) m
  WHERE r.account_name = m.account_name AND r.day = m.day AND r.coin = m.coin
    AND r.symbol IS NOT DISTINCT FROM m.symbol AND r.business_type = m.business_type
    AND r.bills = 0;

  UPDATE daily_rollups r SET amount = round(r.amount, s.amount_scale), fill_fee = round(r.fill_fee, s.fee_scale)
  FROM (SELECT DISTINCT account_name, day, coin, symbol, business_type FROM unnest(moves)) k
  CROSS JOIN LATERAL (
    SELECT max(scale(b.amount)) AS amount_scale, max(scale(b.fill_fee)) AS fee_scale
    FROM bills b
    WHERE b.account_name = k.account_name AND b.coin = k.coin AND b.business_type = k.business_type
      AND b.symbol IS NOT DISTINCT FROM k.symbol
      AND b.created_at >= k.day::timestamp AT TIME ZONE 'UTC'
      AND b.created_at < (k.day + 1)::timestamp AT TIME ZONE 'UTC'
  ) s
  WHERE r.account_name = k.account_name AND r.day = k.day AND r.coin = k.coin
    AND r.symbol IS NOT DISTINCT FROM k.symbol AND r.business_type = k.business_type;
END
$$;

-- The stored '' become NULL. This is the same fact in its one form now, not a new version from the
-- exchange: it must file no revision (bills_guard would file one per bill), and bill_revisions,
-- append-only, refuses any update. Both guards are off for these statements only, inside this
-- migration's transaction, so no other writer ever runs without them. The rollups' update trigger
-- is off too: each rollup row of '' becomes the row of NULL with the same sums (no NULL row existed
-- before), which the UPDATE of daily_rollups does directly, so rollups and bills still agree at commit.
ALTER TABLE "bills" DISABLE TRIGGER "bills_guard";
ALTER TABLE "bills" DISABLE TRIGGER "bills_rollups_update";
UPDATE "bills" SET "symbol" = NULL WHERE "symbol" = '';
UPDATE "daily_rollups" SET "symbol" = NULL WHERE "symbol" = '';
ALTER TABLE "bills" ENABLE TRIGGER "bills_guard";
-- ENABLE ALWAYS, as the daily_rollups migration left it (a plain ENABLE would skip it under replica).
ALTER TABLE "bills" ENABLE ALWAYS TRIGGER "bills_rollups_update";

ALTER TABLE "bill_revisions" DISABLE TRIGGER "bill_revisions_append_only";
UPDATE "bill_revisions" SET "symbol" = NULL WHERE "symbol" = '';
ALTER TABLE "bill_revisions" ENABLE TRIGGER "bill_revisions_append_only";
