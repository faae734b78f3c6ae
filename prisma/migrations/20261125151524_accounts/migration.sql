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
