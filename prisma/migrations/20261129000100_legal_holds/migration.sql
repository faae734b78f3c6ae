-- Legal holds (`ledger-sync accounts hold NAME --reason TEXT`, `accounts release`): while an account has
-- a hold not released, nothing of its books is pruned or deleted: snapshot retention skips it and
-- `accounts remove --delete-books` is refused, naming the hold (src/store/legal-holds.ts). A hold is
-- a record in its own right: it is never deleted (not by a purge either), and its only change is its
-- release, set once, by the tables' owner. docs/schema.md, "legal_holds"; docs/operations.md,
-- "Retention and legal holds".

-- CreateTable
CREATE TABLE "legal_holds" (
    "account_name" TEXT NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "placed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "placed_by" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "db_user" TEXT NOT NULL DEFAULT CURRENT_USER,
    "released_at" TIMESTAMPTZ(3),
    "released_by" TEXT,
    "release_reason" TEXT,
    "released_db_user" TEXT,

    CONSTRAINT "legal_holds_pkey" PRIMARY KEY ("account_name","id")
);


-- ---- Hand-written (Prisma's schema language has no CHECK constraints or triggers) ----

-- Who placed it and why are words, not blanks; a release is whole (when, by whom and why, or none of
-- them) and comes after the placing.
ALTER TABLE "legal_holds" ADD CONSTRAINT "legal_holds_placed_by_given" CHECK ("placed_by" ~ '[^[:space:]]');
ALTER TABLE "legal_holds" ADD CONSTRAINT "legal_holds_reason_given" CHECK ("reason" ~ '[^[:space:]]');
ALTER TABLE "legal_holds" ADD CONSTRAINT "legal_holds_release_whole" CHECK (
  ("released_at" IS NULL AND "released_by" IS NULL AND "release_reason" IS NULL)
  OR ("released_at" IS NOT NULL AND "released_by" ~ '[^[:space:]]' AND "release_reason" ~ '[^[:space:]]')
);
ALTER TABLE "legal_holds" ADD CONSTRAINT "legal_holds_released_after_placed"
  CHECK ("released_at" IS NULL OR "released_at" >= "placed_at");

-- The guard. INSERT: a hold first takes the account's hold lock, which every prune and purge holds
-- (shared) from before it reads the holds until it commits, so none can read "no hold" and delete
-- after this hold is committed. UPDATE: only the release, once, only by a member of the table's owner
-- (the grants keep the runtime role read-only here; this holds even before grant-runtime runs again
-- after this migration), and at the database's time. DELETE and TRUNCATE: refused, for every role.
CREATE FUNCTION "ledger_sync_legal_holds_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM pg_advisory_xact_lock(hashtext('ledger_sync_legal_hold'), hashtext(NEW.account_name));
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF OLD.released_at IS NOT NULL THEN
      RAISE EXCEPTION 'legal hold % of account "%" was released at %: a hold is released once (place a new one)',
        OLD.id, OLD.account_name, OLD.released_at
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (NEW.account_name, NEW.id, NEW.placed_at, NEW.placed_by, NEW.reason, NEW.db_user)
       IS DISTINCT FROM (OLD.account_name, OLD.id, OLD.placed_at, OLD.placed_by, OLD.reason, OLD.db_user)
       OR NEW.released_at IS NULL THEN
      RAISE EXCEPTION 'legal_holds is append-only: an UPDATE may only release a hold (released_at, released_by, release_reason)'
        USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF NOT pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'MEMBER') THEN
      RAISE EXCEPTION 'legal hold % of account "%": only the owner of the tables (the role that runs migrate) releases a hold',
        OLD.id, OLD.account_name
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    NEW.released_at := now();
    NEW.released_db_user := current_user;
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'legal_holds is append-only: % refused (a hold is released, never deleted)', TG_OP
    USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER "legal_holds_guard" BEFORE INSERT OR UPDATE OR DELETE ON "legal_holds"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_legal_holds_guard"();
CREATE TRIGGER "legal_holds_no_truncate" BEFORE TRUNCATE ON "legal_holds"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_legal_holds_guard"();
