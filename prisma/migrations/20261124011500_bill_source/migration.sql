-- Issue 16: which endpoint stored each bill, the transfer reason both endpoints may send, and where
-- a stream paged by a cursor resumes.

-- AlterTable
ALTER TABLE "bills" ADD COLUMN "source" TEXT NOT NULL DEFAULT 'v2',
ADD COLUMN "transfer_reason" TEXT;

-- AlterTable
ALTER TABLE "bill_revisions" ADD COLUMN "transfer_reason" TEXT;

-- AlterTable
ALTER TABLE "sync_state" ADD COLUMN "resume" JSONB;

-- Hand-written (Prisma's schema language cannot express CHECK constraints or triggers).
-- source: the endpoint that first stored the bill (v2 bills, v3 income); it never changes.
ALTER TABLE "bills" ADD CONSTRAINT "bills_source_known" CHECK ("source" IN ('v2', 'v3'));

-- The bills guard of the audit trail, now also over transfer_reason (a change is a revision, and
-- its old value is filed with it) and source (never changes).
CREATE OR REPLACE FUNCTION "ledger_sync_bills_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
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
