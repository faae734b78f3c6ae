-- Restore drills (`ledger-sync archive drill DIR --anchors ANCHOR_DIR`, issue 33): an archived month
-- loaded into an empty database, its closes recomputed from the restored bills and compared with
-- their anchors. Each drill, pass or fail, is recorded here, in the books' database, after it
-- finishes. A record is evidence that the archive could be restored, and when: it is never changed
-- or removed (no UPDATE, DELETE or TRUNCATE, for every role), and the runtime role may only read it
-- (src/store/runtime-role.ts). docs/schema.md, "restore_drills"; docs/operations.md, "Restore drill".

-- CreateTable
CREATE TABLE "restore_drills" (
    "id" BIGSERIAL NOT NULL,
    "month" DATE NOT NULL,
    "archive_dir" TEXT NOT NULL,
    "manifest_sha256" TEXT NOT NULL,
    "anchors_dir" TEXT NOT NULL,
    "restore_target" TEXT NOT NULL,
    "target_server_version" TEXT,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,
    "outcome" TEXT NOT NULL,
    "accounts" INTEGER NOT NULL,
    "closes_checked" INTEGER NOT NULL,
    "closes_proven" INTEGER NOT NULL,
    "bills_loaded" BIGINT NOT NULL,
    "failures" JSONB NOT NULL,
    "closes" JSONB NOT NULL,
    "run_by" TEXT NOT NULL,
    "db_user" TEXT NOT NULL DEFAULT CURRENT_USER,
    "recorded_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "restore_drills_pkey" PRIMARY KEY ("id")
);


-- ---- Hand-written (Prisma's schema language has no CHECK constraints or triggers) ----

-- A record says what it is: a month's first day, a manifest's SHA-256, a pass with no failure or a
-- fail with at least one, counts that add up, and an end after its start.
ALTER TABLE "restore_drills" ADD CONSTRAINT "restore_drills_month" CHECK (date_trunc('month', "month") = "month");
ALTER TABLE "restore_drills" ADD CONSTRAINT "restore_drills_manifest_sha256" CHECK ("manifest_sha256" ~ '^[0-9a-f]{64}$');
ALTER TABLE "restore_drills" ADD CONSTRAINT "restore_drills_outcome" CHECK (
  jsonb_typeof("failures") = 'array' AND jsonb_typeof("closes") = 'array'
  AND (("outcome" = 'pass' AND jsonb_array_length("failures") = 0)
       OR ("outcome" = 'fail' AND jsonb_array_length("failures") > 0))
);
ALTER TABLE "restore_drills" ADD CONSTRAINT "restore_drills_counts" CHECK (
  "accounts" >= 0 AND "bills_loaded" >= 0 AND "closes_proven" >= 0 AND "closes_proven" <= "closes_checked"
);
ALTER TABLE "restore_drills" ADD CONSTRAINT "restore_drills_finished_after_started" CHECK ("finished_at" >= "started_at");
ALTER TABLE "restore_drills" ADD CONSTRAINT "restore_drills_run_by_given" CHECK ("run_by" ~ '[^[:space:]]');

-- The guard: a drill's record is written once. UPDATE, DELETE and TRUNCATE are refused for every role,
-- the owner's too (ledger_sync_append_only would not do: it lets a purge of an account's books delete,
-- and a drill is no account's).
CREATE FUNCTION "ledger_sync_restore_drills_guard"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'restore_drills is append-only: % refused (a drill''s record is written once, never changed or removed)', TG_OP
    USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER "restore_drills_append_only" BEFORE UPDATE OR DELETE ON "restore_drills"
  FOR EACH ROW EXECUTE FUNCTION "ledger_sync_restore_drills_guard"();
CREATE TRIGGER "restore_drills_no_truncate" BEFORE TRUNCATE ON "restore_drills"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_sync_restore_drills_guard"();
