-- CreateTable
CREATE TABLE "exchange_profiles" (
    "account_name" TEXT NOT NULL,
    "page_size" INTEGER,
    "page_size_capped" BOOLEAN NOT NULL DEFAULT false,
    "max_span_ms" BIGINT,
    "history_ms" BIGINT,
    "filter_offset_ms" BIGINT NOT NULL DEFAULT 0,
    "start_inclusive" BOOLEAN,
    "end_inclusive" BOOLEAN,
    "has_next_page" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "exchange_profiles_pkey" PRIMARY KEY ("account_name")
);


-- Hand-written: the only values has_next_page may hold (Prisma has no CHECK constraints).
ALTER TABLE "exchange_profiles" ADD CONSTRAINT "exchange_profiles_has_next_page_check"
  CHECK ("has_next_page" IN ('honest', 'absent', 'distrusted'));
