-- CreateTable
CREATE TABLE "sync_runs" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "stream" TEXT NOT NULL,
    "window_from" TIMESTAMPTZ(3),
    "window_to" TIMESTAMPTZ(3),
    "window_from_ms" BIGINT,
    "window_to_ms" BIGINT,
    "pages" INTEGER NOT NULL DEFAULT 0,
    "records_fetched" INTEGER NOT NULL DEFAULT 0,
    "records_new" INTEGER NOT NULL DEFAULT 0,
    "records_changed" INTEGER NOT NULL DEFAULT 0,
    "quarantined" INTEGER NOT NULL DEFAULT 0,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "outcome" TEXT NOT NULL,
    "error" TEXT,
    "detail" JSONB,

    CONSTRAINT "sync_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "verify_state" (
    "account_name" TEXT NOT NULL,
    "check_from_ms" BIGINT NOT NULL,
    "write_seq" BIGINT NOT NULL DEFAULT 0,
    "rules" JSONB NOT NULL DEFAULT '{}',
    "cum_from" JSONB NOT NULL DEFAULT '{}',
    "last_run_at" TIMESTAMPTZ(3),
    "outcome" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "report" JSONB,

    CONSTRAINT "verify_state_pkey" PRIMARY KEY ("account_name")
);

-- CreateIndex
CREATE INDEX "sync_runs_account_stream_started_idx" ON "sync_runs"("account_name", "stream", "started_at");

-- CreateIndex
CREATE INDEX "sync_runs_started_idx" ON "sync_runs"("started_at");

-- CreateIndex
CREATE INDEX "bills_account_coin_created_ms_idx" ON "bills"("account_name", "coin", "created_at_ms");


-- ---- Hand-written: the audit trail (Prisma's schema language does not describe triggers) ----

ALTER TABLE "sync_runs" ADD CONSTRAINT "sync_runs_outcome_known"
  CHECK ("outcome" IN ('running', 'ok', 'unverified', 'failed', 'interrupted'));
ALTER TABLE "verify_state" ADD CONSTRAINT "verify_state_outcome_known"
  CHECK ("outcome" IS NULL OR "outcome" IN ('pass', 'fail'));

-- Bills are append-only. The one column that may change freely is last_seen_at. Any other change
-- is a revision: it is refused unless the writer declared the revision path for its transaction
-- (ledger-sync's bills write sets ledger_sync.revision = 'on' with set_config(..., true)), and even
-- then the trigger itself files the old version in bill_revisions, so no writer can overwrite a bill
-- without leaving the previous content behind. Deletes and truncates are refused outright.
CREATE FUNCTION "ledger_sync_bills_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'bills are never deleted (bill % of account %)', OLD.bill_id, OLD.account_name
      USING ERRCODE = 'integrity_constraint_violation',
            HINT = 'the audit trail keeps every bill; a wrong bill is corrected by a newer version from the exchange (bill_revisions keeps the old one)';
  END IF;
  IF (NEW.account_name, NEW.bill_id) IS DISTINCT FROM (OLD.account_name, OLD.bill_id) THEN
    RAISE EXCEPTION 'a bill''s account and id never change (bill % of account %)', OLD.bill_id, OLD.account_name
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  -- Numerics compare as text: a change of scale ("1.5" -> "1.50") is a change of what was reported.
  IF (NEW.coin, NEW.symbol, NEW.business_type, NEW.amount::text, NEW.balance::text, NEW.fill_fee::text,
      NEW.created_at, NEW.created_at_ms, NEW.raw, NEW.first_seen_at)
     IS DISTINCT FROM
     (OLD.coin, OLD.symbol, OLD.business_type, OLD.amount::text, OLD.balance::text, OLD.fill_fee::text,
      OLD.created_at, OLD.created_at_ms, OLD.raw, OLD.first_seen_at) THEN
    IF current_setting('ledger_sync.revision', true) IS DISTINCT FROM 'on' THEN
      RAISE EXCEPTION 'bill % of account % cannot be changed outside the revision path', OLD.bill_id, OLD.account_name
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'bill content changes only when the exchange reports a new version; ledger-sync files the old one in bill_revisions';
    END IF;
    INSERT INTO bill_revisions (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee,
                                created_at, created_at_ms, raw, first_seen_at, replaced_at)
    VALUES (OLD.account_name, OLD.bill_id, OLD.coin, OLD.symbol, OLD.business_type, OLD.amount, OLD.balance, OLD.fill_fee,
            OLD.created_at, OLD.created_at_ms, OLD.raw, OLD.first_seen_at, NEW.last_seen_at);
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "bills_guard" BEFORE UPDATE OR DELETE ON "bills"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_bills_guard"();

-- Append-only tables of the trail: rows are added, never changed or removed.
CREATE FUNCTION "ledger_sync_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER "bills_no_truncate" BEFORE TRUNCATE ON "bills"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_append_only"();
CREATE TRIGGER "bill_revisions_append_only" BEFORE UPDATE OR DELETE ON "bill_revisions"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_append_only"();
CREATE TRIGGER "bill_revisions_no_truncate" BEFORE TRUNCATE ON "bill_revisions"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_append_only"();
-- Runs are completed by an UPDATE (finished_at, outcome), but never removed.
CREATE TRIGGER "sync_runs_no_delete" BEFORE DELETE ON "sync_runs"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_append_only"();
CREATE TRIGGER "sync_runs_no_truncate" BEFORE TRUNCATE ON "sync_runs"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_append_only"();
