-- Issue 32, "beyond one server": every primary key and unique index of the books leads with the
-- account, and every foreign key between them carries it, so that distributing the tables by
-- account (Citus: a unique key must contain the distribution column, a foreign key must join on it)
-- is a deployment choice, not a rewrite (docs/design/beyond-one-server.md). Column names do not
-- change (the BI contract): only keys. test/store/account-keys.test.ts reads the catalog and fails
-- on any unique key that does not lead with the account.
--
-- Rows keep their ids. "id" stays each table's identity column, filled by its own sequence as
-- before, so it is still unique on its own; it is no longer the whole key, only its second column.
--
-- Cost on a populated database: one index build per table (each DROP/ADD of a primary key below is
-- one ALTER TABLE: the old index is dropped, the new one built in one pass over the table; no table
-- is rewritten, since account_name and id are NOT NULL already), under an exclusive lock on that
-- table for the length of its build; sync_runs with millions of rows builds one index, once.
-- period_close_bills alone is written: it gains account_name, filled from its close in one UPDATE
-- (one new version of each row, before any index exists on it, so no index is maintained row by
-- row; VACUUM returns the old versions' space), then its one index is built.

-- The foreign keys into period_closes hang on its primary key, which cannot be dropped under them;
-- they come back below, account first.
ALTER TABLE "period_close_bills" DROP CONSTRAINT "period_close_bills_close_id_fkey";
ALTER TABLE "period_closes" DROP CONSTRAINT "period_closes_supersedes_fkey";
DROP INDEX "period_closes_supersedes_key";

-- Primary keys: (account_name, id).
ALTER TABLE "bill_revisions" DROP CONSTRAINT "bill_revisions_pkey",
ADD CONSTRAINT "bill_revisions_pkey" PRIMARY KEY ("account_name", "id");
ALTER TABLE "sync_runs" DROP CONSTRAINT "sync_runs_pkey",
ADD CONSTRAINT "sync_runs_pkey" PRIMARY KEY ("account_name", "id");
ALTER TABLE "period_closes" DROP CONSTRAINT "period_closes_pkey",
ADD CONSTRAINT "period_closes_pkey" PRIMARY KEY ("account_name", "id");
ALTER TABLE "quarantine" DROP CONSTRAINT "quarantine_pkey",
ADD CONSTRAINT "quarantine_pkey" PRIMARY KEY ("account_name", "id");
ALTER TABLE "account_snapshots" DROP CONSTRAINT "account_snapshots_pkey",
ADD CONSTRAINT "account_snapshots_pkey" PRIMARY KEY ("account_name", "id");
ALTER TABLE "fee_settings" DROP CONSTRAINT "fee_settings_pkey",
ADD CONSTRAINT "fee_settings_pkey" PRIMARY KEY ("account_name", "id");
ALTER TABLE "mode_settings" DROP CONSTRAINT "mode_settings_pkey",
ADD CONSTRAINT "mode_settings_pkey" PRIMARY KEY ("account_name", "id");
ALTER TABLE "leverage_settings" DROP CONSTRAINT "leverage_settings_pkey",
ADD CONSTRAINT "leverage_settings_pkey" PRIMARY KEY ("account_name", "id");
ALTER TABLE "collateral_history" DROP CONSTRAINT "collateral_history_pkey",
ADD CONSTRAINT "collateral_history_pkey" PRIMARY KEY ("account_name", "id");
ALTER TABLE "position_history" DROP CONSTRAINT "position_history_pkey",
ADD CONSTRAINT "position_history_pkey" PRIMARY KEY ("account_name", "id");

-- period_close_bills names its close's account, so that its key and its foreign key lead with it.
-- Every row has a close (the foreign key held until this transaction), so none is left NULL. The
-- append-only guard is off for this one UPDATE only, inside this migration's transaction (as
-- migration null_symbol did): the rows gain a column, no sealed content changes.
ALTER TABLE "period_close_bills" DROP CONSTRAINT "period_close_bills_pkey",
ADD COLUMN "account_name" TEXT;
ALTER TABLE "period_close_bills" DISABLE TRIGGER "period_close_bills_append_only";
UPDATE "period_close_bills" b SET "account_name" = c."account_name" FROM "period_closes" c WHERE c."id" = b."close_id";
ALTER TABLE "period_close_bills" ENABLE TRIGGER "period_close_bills_append_only";
ALTER TABLE "period_close_bills" ALTER COLUMN "account_name" SET NOT NULL,
ADD CONSTRAINT "period_close_bills_pkey" PRIMARY KEY ("account_name", "close_id", "bill_id");

-- A close is superseded at most once: unique per account now (a close supersedes only a close of
-- its own account, which the foreign key below enforces, so this is the same rule).
CREATE UNIQUE INDEX "period_closes_supersedes_key" ON "period_closes"("account_name", "supersedes");

-- The foreign keys again, on (account, close). A NULL supersedes (a first close) is not checked, as
-- before (MATCH SIMPLE). The chain trigger (ledger_sync_period_close_chain) stays as it is: it
-- already looks the superseded close up by account and id, which the new primary key serves.
ALTER TABLE "period_closes" ADD CONSTRAINT "period_closes_supersedes_fkey" FOREIGN KEY ("account_name", "supersedes") REFERENCES "period_closes"("account_name", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;
ALTER TABLE "period_close_bills" ADD CONSTRAINT "period_close_bills_close_id_fkey" FOREIGN KEY ("account_name", "close_id") REFERENCES "period_closes"("account_name", "id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- The append-only guard let a purge delete period_close_bills rows by looking their close's account
-- up by id alone, which no index serves any more; the row names its account now, like every other
-- table of the trail. Otherwise as migration accounts left it (OLD is read only for a DELETE: a
-- TRUNCATE trigger has no row).
CREATE OR REPLACE FUNCTION "ledger_sync_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF "ledger_sync_purging"(OLD.account_name) THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'integrity_constraint_violation';
END
$$;
