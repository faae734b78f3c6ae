-- CreateTable
CREATE TABLE "accounts" (
    "name" TEXT NOT NULL,
    "uid" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "coin_ids" TEXT[],
    "bills_source" TEXT,
    "backfill_from" TIMESTAMPTZ(3),
    "master_key_id" TEXT NOT NULL,
    "wrapped_key" BYTEA NOT NULL,
    "sealed_credentials" BYTEA NOT NULL,
    "credentials_version" INTEGER NOT NULL DEFAULT 1,
    "credentials_rotated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "sync_schedule" (
    "account_name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "last_enqueued_at" TIMESTAMPTZ(3),

    CONSTRAINT "sync_schedule_pkey" PRIMARY KEY ("account_name","kind")
);

-- CreateIndex
CREATE UNIQUE INDEX "accounts_uid_key" ON "accounts"("uid");

-- CreateIndex
CREATE INDEX "sync_schedule_due_at_idx" ON "sync_schedule"("due_at");

-- Hand-written: the values the columns may hold (Prisma has no CHECK constraints).
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_status_check" CHECK ("status" IN ('active', 'disabled'));
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_bills_source_check" CHECK ("bills_source" IN ('v2', 'v3'));
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_uid_check" CHECK ("uid" ~ '^[0-9A-Za-z_-]{1,64}$');
ALTER TABLE "sync_schedule" ADD CONSTRAINT "sync_schedule_kind_check"
  CHECK ("kind" IN ('bills', 'snapshots', 'resweep', 'cross-check'));

-- Hand-written: a read-only role made before this migration got SELECT on every future table
-- (ALTER DEFAULT PRIVILEGES, `grant-readonly`): it keeps SELECT on the columns that hold no secret
-- material, and loses the sealed ones. `grant-readonly` applies the same rule to roles made later.
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT DISTINCT grantee FROM information_schema.role_table_grants
           WHERE table_schema = current_schema() AND table_name = 'accounts' AND privilege_type = 'SELECT'
             AND grantee <> current_user
  LOOP
    EXECUTE format('REVOKE SELECT ON "accounts" FROM %I', r.grantee);
    EXECUTE format('GRANT SELECT ("name", "uid", "status", "coin_ids", "bills_source", "backfill_from", '
      '"master_key_id", "credentials_version", "credentials_rotated_at", "created_at", "updated_at") '
      'ON "accounts" TO %I', r.grantee);
  END LOOP;
END $$;

-- Hand-written: `ledger-sync accounts remove NAME --delete-books --confirm NAME` deletes one
-- account's books in one transaction that names the account in the transaction-local setting
-- ledger_sync.purge_account. The audit trail's guards let exactly that account's rows go and refuse
-- everything else as before; nothing else sets it (the worker's role cannot delete bills at all).
CREATE FUNCTION "ledger_sync_purging"(account text) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT account IS NOT NULL AND current_setting('ledger_sync.purge_account', true) = account
$$;

CREATE OR REPLACE FUNCTION "ledger_sync_bills_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF "ledger_sync_purging"(OLD.account_name) THEN
      RETURN OLD;
    END IF;
    RAISE EXCEPTION 'bills are never deleted (bill % of account %)', OLD.bill_id, OLD.account_name
      USING ERRCODE = 'integrity_constraint_violation',
            HINT = 'the audit trail keeps every bill; a wrong bill is corrected by a newer version from the exchange (bill_revisions keeps the old one)';
  END IF;
  IF (NEW.account_name, NEW.bill_id, NEW.source) IS DISTINCT FROM (OLD.account_name, OLD.bill_id, OLD.source) THEN
    RAISE EXCEPTION 'a bill''s account, id and source never change (bill % of account %)', OLD.bill_id, OLD.account_name
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  -- Numerics compare as text: a change of scale ("1.5" -> "1.50") is a change of what was reported.
  IF (NEW.coin, NEW.symbol, NEW.business_type, NEW.amount::text, NEW.balance::text, NEW.fill_fee::text,
      NEW.created_at, NEW.created_at_ms, NEW.raw, NEW.first_seen_at, NEW.transfer_reason)
     IS DISTINCT FROM
     (OLD.coin, OLD.symbol, OLD.business_type, OLD.amount::text, OLD.balance::text, OLD.fill_fee::text,
      OLD.created_at, OLD.created_at_ms, OLD.raw, OLD.first_seen_at, OLD.transfer_reason) THEN
    IF current_setting('ledger_sync.revision', true) IS DISTINCT FROM 'on' THEN
      RAISE EXCEPTION 'bill % of account % cannot be changed outside the revision path', OLD.bill_id, OLD.account_name
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'bill content changes only when the exchange reports a new version; ledger-sync files the old one in bill_revisions';
    END IF;
    INSERT INTO bill_revisions (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee,
                                created_at, created_at_ms, raw, first_seen_at, replaced_at, transfer_reason)
    VALUES (OLD.account_name, OLD.bill_id, OLD.coin, OLD.symbol, OLD.business_type, OLD.amount, OLD.balance, OLD.fill_fee,
            OLD.created_at, OLD.created_at_ms, OLD.raw, OLD.first_seen_at, NEW.last_seen_at, OLD.transfer_reason);
  END IF;
  RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION "ledger_sync_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF TG_TABLE_NAME = 'period_close_bills' THEN
      IF EXISTS (SELECT 1 FROM period_closes p WHERE p.id = OLD.close_id AND "ledger_sync_purging"(p.account_name)) THEN
        RETURN OLD;
      END IF;
    ELSIF "ledger_sync_purging"(OLD.account_name) THEN
      RETURN OLD;
    END IF;
  END IF;
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'integrity_constraint_violation';
END
$$;
