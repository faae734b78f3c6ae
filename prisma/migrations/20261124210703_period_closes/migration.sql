-- Issue 18: closed accounting periods (`ledger-sync close`), documented in docs/schema.md.

-- CreateTable
CREATE TABLE "period_closes" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "period_start_ms" BIGINT NOT NULL,
    "period_end_ms" BIGINT NOT NULL,
    "bill_count" INTEGER NOT NULL,
    "digest" TEXT NOT NULL,
    "figures" JSONB NOT NULL,
    "closed_by" TEXT NOT NULL,
    "db_user" TEXT NOT NULL DEFAULT CURRENT_USER,
    "closed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "supersedes" BIGINT,

    CONSTRAINT "period_closes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "period_close_bills" (
    "close_id" BIGINT NOT NULL,
    "bill_id" TEXT NOT NULL,
    "line_sha256" BYTEA NOT NULL,

    CONSTRAINT "period_close_bills_pkey" PRIMARY KEY ("close_id","bill_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "period_closes_supersedes_key" ON "period_closes"("supersedes");

-- CreateIndex
CREATE INDEX "period_closes_account_period_idx" ON "period_closes"("account_name", "period_start_ms", "period_end_ms");

-- AddForeignKey
ALTER TABLE "period_closes" ADD CONSTRAINT "period_closes_supersedes_fkey" FOREIGN KEY ("supersedes") REFERENCES "period_closes"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;

-- AddForeignKey
ALTER TABLE "period_close_bills" ADD CONSTRAINT "period_close_bills_close_id_fkey" FOREIGN KEY ("close_id") REFERENCES "period_closes"("id") ON DELETE RESTRICT ON UPDATE RESTRICT;


-- ---- Hand-written (Prisma's schema language has no CHECK constraints, partial indexes or triggers) ----

ALTER TABLE "period_closes" ADD CONSTRAINT "period_closes_period_order" CHECK ("period_end_ms" > "period_start_ms");
ALTER TABLE "period_closes" ADD CONSTRAINT "period_closes_digest_hex" CHECK ("digest" ~ '^[0-9a-f]{64}$');
ALTER TABLE "period_closes" ADD CONSTRAINT "period_closes_bill_count_known" CHECK ("bill_count" >= 0);
ALTER TABLE "period_close_bills" ADD CONSTRAINT "period_close_bills_bill_id_digits" CHECK ("bill_id" ~ '^[0-9]+$');
ALTER TABLE "period_close_bills" ADD CONSTRAINT "period_close_bills_sha256_size" CHECK (length("line_sha256") = 32);

-- A period's closes form one chain: exactly one first close (supersedes NULL) per account and
-- period, and each later close supersedes one earlier row (the unique index above) of the same
-- account and period, so two closes racing each other cannot both stand.
CREATE UNIQUE INDEX "period_closes_first_close_key" ON "period_closes" ("account_name", "period_start_ms", "period_end_ms")
  WHERE "supersedes" IS NULL;

CREATE FUNCTION "ledger_sync_period_close_chain"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.supersedes IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM period_closes p
       WHERE p.id = NEW.supersedes AND p.account_name = NEW.account_name
         AND p.period_start_ms = NEW.period_start_ms AND p.period_end_ms = NEW.period_end_ms) THEN
    RAISE EXCEPTION 'close % of account % supersedes %, which is not a close of the same account and period',
      NEW.id, NEW.account_name, NEW.supersedes
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER "period_closes_chain" BEFORE INSERT ON "period_closes"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_period_close_chain"();

-- A close is the auditor's record of what was sealed: rows are added, never changed or removed
-- (the same guard as bill_revisions; a changed period is closed again, in a new row).
CREATE TRIGGER "period_closes_append_only" BEFORE UPDATE OR DELETE ON "period_closes"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_append_only"();
CREATE TRIGGER "period_closes_no_truncate" BEFORE TRUNCATE ON "period_closes"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_append_only"();
CREATE TRIGGER "period_close_bills_append_only" BEFORE UPDATE OR DELETE ON "period_close_bills"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_append_only"();
CREATE TRIGGER "period_close_bills_no_truncate" BEFORE TRUNCATE ON "period_close_bills"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_append_only"();
