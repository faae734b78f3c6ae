-- The wallet check (issue 26): what the exchange reported an account's balance to be, per coin, and
-- whether the bills calculate the same figure. A reading waits in wallet_readings until the bills
-- sync has read past its instant; its result then replaces the coin's row in wallet_checks.

-- Reported balances not yet compared. figures: [{"label": ..., "amount": "<decimal text>"}], the
-- candidates one reading offers (a collateral snapshot: the main record and all records together).
CREATE TABLE "wallet_readings" (
    "account_name" TEXT NOT NULL,
    "coin" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "observed_at_ms" BIGINT NOT NULL,
    "figures" JSONB NOT NULL,
    CONSTRAINT "wallet_readings_pkey" PRIMARY KEY ("account_name", "coin", "source", "observed_at_ms"),
    CONSTRAINT "wallet_readings_source_check" CHECK ("source" IN ('collateral', 'v3-balance'))
);

-- Each coin's latest compared reading and its result: what verify recomputes, what /metrics shows.
CREATE TABLE "wallet_checks" (
    "account_name" TEXT NOT NULL,
    "coin" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "observed_at_ms" BIGINT NOT NULL,
    "figures" JSONB NOT NULL,
    "status" TEXT NOT NULL,
    "reported" NUMERIC,
    "calculated" NUMERIC,
    "difference" NUMERIC,
    "last_tied_at_ms" BIGINT,
    "window_from_ms" BIGINT,
    "window_to_ms" BIGINT,
    "summary" TEXT NOT NULL,
    "checked_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "wallet_checks_pkey" PRIMARY KEY ("account_name", "coin", "source"),
    CONSTRAINT "wallet_checks_status_check" CHECK ("status" IN ('tied', 'not_tied', 'inconclusive'))
);
