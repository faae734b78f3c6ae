-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "bills" (
    "account_name" TEXT NOT NULL,
    "bill_id" TEXT NOT NULL,
    "coin" TEXT NOT NULL,
    "symbol" TEXT NOT NULL,
    "business_type" TEXT NOT NULL,
    "amount" DECIMAL NOT NULL,
    "balance" DECIMAL NOT NULL,
    "fill_fee" DECIMAL NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at_ms" BIGINT NOT NULL,
    "raw" JSONB NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bills_pkey" PRIMARY KEY ("account_name","bill_id")
);

-- CreateTable
CREATE TABLE "bill_revisions" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "bill_id" TEXT NOT NULL,
    "coin" TEXT NOT NULL,
    "symbol" TEXT NOT NULL,
    "business_type" TEXT NOT NULL,
    "amount" DECIMAL NOT NULL,
    "balance" DECIMAL NOT NULL,
    "fill_fee" DECIMAL NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at_ms" BIGINT NOT NULL,
    "raw" JSONB NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "replaced_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "bill_revisions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sync_state" (
    "account_name" TEXT NOT NULL,
    "stream" TEXT NOT NULL,
    "cursor_ms" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "sync_state_pkey" PRIMARY KEY ("account_name","stream")
);

-- CreateTable
CREATE TABLE "quarantine" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "stream" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "raw_text" TEXT NOT NULL,
    "raw_hash" TEXT NOT NULL,
    "context" JSONB NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "seen_count" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "quarantine_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "bills_account_created_at_idx" ON "bills"("account_name", "created_at");

-- CreateIndex
CREATE INDEX "bills_account_coin_type_created_at_idx" ON "bills"("account_name", "coin", "business_type", "created_at");

-- CreateIndex
CREATE INDEX "bills_account_symbol_created_at_idx" ON "bills"("account_name", "symbol", "created_at");

-- CreateIndex
CREATE INDEX "bill_revisions_account_bill_idx" ON "bill_revisions"("account_name", "bill_id", "replaced_at");

-- CreateIndex
CREATE UNIQUE INDEX "quarantine_account_stream_hash_key" ON "quarantine"("account_name", "stream", "raw_hash");

-- Hand-written (Prisma's schema language cannot express CHECK constraints, so the diff never
-- generates them, and Prisma does not treat them as drift either): bill ids are decimal digits
-- exactly as the exchange sent them.
ALTER TABLE "bills" ADD CONSTRAINT "bills_bill_id_digits" CHECK ("bill_id" ~ '^[0-9]+$');
ALTER TABLE "bill_revisions" ADD CONSTRAINT "bill_revisions_bill_id_digits" CHECK ("bill_id" ~ '^[0-9]+$');
