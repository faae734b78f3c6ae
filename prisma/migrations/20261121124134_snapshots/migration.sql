-- CreateTable
CREATE TABLE "account_snapshots" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "coin_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "client_account_id" TEXT NOT NULL,
    "is_system_account" BOOLEAN NOT NULL,
    "create_order_rate_limit_per_minute" BIGINT NOT NULL,
    "create_order_delay_milliseconds" BIGINT NOT NULL,
    "extra_type" TEXT NOT NULL,
    "extra_data_json" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "created_time" TIMESTAMPTZ(3) NOT NULL,
    "created_time_ms" BIGINT NOT NULL,
    "updated_time" TIMESTAMPTZ(3) NOT NULL,
    "updated_time_ms" BIGINT NOT NULL,
    "version" TEXT NOT NULL,
    "taken_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "content_hash" TEXT NOT NULL,
    "raw" JSONB NOT NULL,

    CONSTRAINT "account_snapshots_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "fee_settings" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "contract_id" TEXT NOT NULL,
    "is_set_fee_rate" BOOLEAN NOT NULL,
    "taker_fee_rate" DECIMAL NOT NULL,
    "maker_fee_rate" DECIMAL NOT NULL,
    "is_set_fee_discount" BOOLEAN NOT NULL,
    "fee_discount" DECIMAL NOT NULL,
    "is_set_taker_maker_fee_discount" BOOLEAN NOT NULL,
    "taker_fee_discount" DECIMAL NOT NULL,
    "maker_fee_discount" DECIMAL NOT NULL,
    "content_hash" TEXT NOT NULL,
    "raw" JSONB NOT NULL,
    "valid_from" TIMESTAMPTZ(3) NOT NULL,
    "valid_to" TIMESTAMPTZ(3),
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "fee_settings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "mode_settings" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "contract_id" TEXT NOT NULL,
    "margin_mode" TEXT NOT NULL,
    "separated_mode" TEXT NOT NULL,
    "position_mode" TEXT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "raw" JSONB NOT NULL,
    "valid_from" TIMESTAMPTZ(3) NOT NULL,
    "valid_to" TIMESTAMPTZ(3),
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "mode_settings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "leverage_settings" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "contract_id" TEXT NOT NULL,
    "isolated_long_leverage" DECIMAL NOT NULL,
    "isolated_short_leverage" DECIMAL NOT NULL,
    "cross_leverage" DECIMAL NOT NULL,
    "shared_leverage" DECIMAL NOT NULL,
    "content_hash" TEXT NOT NULL,
    "raw" JSONB NOT NULL,
    "valid_from" TIMESTAMPTZ(3) NOT NULL,
    "valid_to" TIMESTAMPTZ(3),
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "leverage_settings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "collateral_current" (
    "account_name" TEXT NOT NULL,
    "coin_id" TEXT NOT NULL,
    "margin_mode" TEXT NOT NULL,
    "cross_contract_id" TEXT NOT NULL,
    "isolated_position_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "amount" DECIMAL NOT NULL,
    "pending_deposit_amount" DECIMAL NOT NULL,
    "pending_withdraw_amount" DECIMAL NOT NULL,
    "pending_transfer_in_amount" DECIMAL NOT NULL,
    "pending_transfer_out_amount" DECIMAL NOT NULL,
    "is_liquidating" BOOLEAN NOT NULL,
    "legacy_amount" DECIMAL NOT NULL,
    "cum_deposit_amount" DECIMAL NOT NULL,
    "cum_withdraw_amount" DECIMAL NOT NULL,
    "cum_transfer_in_amount" DECIMAL NOT NULL,
    "cum_transfer_out_amount" DECIMAL NOT NULL,
    "cum_margin_move_in_amount" DECIMAL NOT NULL,
    "cum_margin_move_out_amount" DECIMAL NOT NULL,
    "cum_position_open_long_amount" DECIMAL NOT NULL,
    "cum_position_open_short_amount" DECIMAL NOT NULL,
    "cum_position_close_long_amount" DECIMAL NOT NULL,
    "cum_position_close_short_amount" DECIMAL NOT NULL,
    "cum_position_fill_fee_amount" DECIMAL NOT NULL,
    "cum_position_liquidate_fee_amount" DECIMAL NOT NULL,
    "cum_position_funding_amount" DECIMAL NOT NULL,
    "cum_order_fill_fee_income_amount" DECIMAL NOT NULL,
    "cum_order_liquidate_fee_income_amount" DECIMAL NOT NULL,
    "created_time" TIMESTAMPTZ(3) NOT NULL,
    "created_time_ms" BIGINT NOT NULL,
    "updated_time" TIMESTAMPTZ(3) NOT NULL,
    "updated_time_ms" BIGINT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "raw" JSONB NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "collateral_current_pkey" PRIMARY KEY ("account_name","coin_id","margin_mode","cross_contract_id","isolated_position_id")
);

-- CreateTable
CREATE TABLE "collateral_history" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "coin_id" TEXT NOT NULL,
    "margin_mode" TEXT NOT NULL,
    "cross_contract_id" TEXT NOT NULL,
    "isolated_position_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "amount" DECIMAL NOT NULL,
    "pending_deposit_amount" DECIMAL NOT NULL,
    "pending_withdraw_amount" DECIMAL NOT NULL,
    "pending_transfer_in_amount" DECIMAL NOT NULL,
    "pending_transfer_out_amount" DECIMAL NOT NULL,
    "is_liquidating" BOOLEAN NOT NULL,
    "legacy_amount" DECIMAL NOT NULL,
    "cum_deposit_amount" DECIMAL NOT NULL,
    "cum_withdraw_amount" DECIMAL NOT NULL,
    "cum_transfer_in_amount" DECIMAL NOT NULL,
    "cum_transfer_out_amount" DECIMAL NOT NULL,
    "cum_margin_move_in_amount" DECIMAL NOT NULL,
    "cum_margin_move_out_amount" DECIMAL NOT NULL,
    "cum_position_open_long_amount" DECIMAL NOT NULL,
    "cum_position_open_short_amount" DECIMAL NOT NULL,
    "cum_position_close_long_amount" DECIMAL NOT NULL,
    "cum_position_close_short_amount" DECIMAL NOT NULL,
    "cum_position_fill_fee_amount" DECIMAL NOT NULL,
    "cum_position_liquidate_fee_amount" DECIMAL NOT NULL,
    "cum_position_funding_amount" DECIMAL NOT NULL,
    "cum_order_fill_fee_income_amount" DECIMAL NOT NULL,
    "cum_order_liquidate_fee_income_amount" DECIMAL NOT NULL,
    "created_time" TIMESTAMPTZ(3) NOT NULL,
    "created_time_ms" BIGINT NOT NULL,
    "updated_time" TIMESTAMPTZ(3) NOT NULL,
    "updated_time_ms" BIGINT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "raw" JSONB NOT NULL,
    "observed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "collateral_history_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "positions_current" (
    "account_name" TEXT NOT NULL,
    "position_id" TEXT NOT NULL,
    "coin_id" TEXT NOT NULL,
    "contract_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "side" TEXT NOT NULL,
    "margin_mode" TEXT NOT NULL,
    "separated_mode" TEXT NOT NULL,
    "separated_open_order_id" TEXT NOT NULL,
    "leverage" DECIMAL NOT NULL,
    "size" DECIMAL NOT NULL,
    "open_value" DECIMAL NOT NULL,
    "open_fee" DECIMAL NOT NULL,
    "funding_fee" DECIMAL NOT NULL,
    "isolated_margin" DECIMAL NOT NULL,
    "is_auto_append_isolated_margin" BOOLEAN NOT NULL,
    "cum_open_size" DECIMAL NOT NULL,
    "cum_open_value" DECIMAL NOT NULL,
    "cum_open_fee" DECIMAL NOT NULL,
    "cum_close_size" DECIMAL NOT NULL,
    "cum_close_value" DECIMAL NOT NULL,
    "cum_close_fee" DECIMAL NOT NULL,
    "cum_funding_fee" DECIMAL NOT NULL,
    "cum_liquidate_fee" DECIMAL NOT NULL,
    "created_match_sequence_id" DECIMAL(39,0) NOT NULL,
    "updated_match_sequence_id" DECIMAL(39,0) NOT NULL,
    "created_time" TIMESTAMPTZ(3) NOT NULL,
    "created_time_ms" BIGINT NOT NULL,
    "updated_time" TIMESTAMPTZ(3) NOT NULL,
    "updated_time_ms" BIGINT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "raw" JSONB NOT NULL,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "changed_at" TIMESTAMPTZ(3) NOT NULL,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL,
    "closed_at" TIMESTAMPTZ(3),

    CONSTRAINT "positions_current_pkey" PRIMARY KEY ("account_name","position_id")
);

-- CreateTable
CREATE TABLE "position_history" (
    "id" BIGSERIAL NOT NULL,
    "account_name" TEXT NOT NULL,
    "position_id" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "coin_id" TEXT NOT NULL,
    "contract_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "side" TEXT NOT NULL,
    "margin_mode" TEXT NOT NULL,
    "separated_mode" TEXT NOT NULL,
    "separated_open_order_id" TEXT NOT NULL,
    "leverage" DECIMAL NOT NULL,
    "size" DECIMAL NOT NULL,
    "open_value" DECIMAL NOT NULL,
    "open_fee" DECIMAL NOT NULL,
    "funding_fee" DECIMAL NOT NULL,
    "isolated_margin" DECIMAL NOT NULL,
    "is_auto_append_isolated_margin" BOOLEAN NOT NULL,
    "cum_open_size" DECIMAL NOT NULL,
    "cum_open_value" DECIMAL NOT NULL,
    "cum_open_fee" DECIMAL NOT NULL,
    "cum_close_size" DECIMAL NOT NULL,
    "cum_close_value" DECIMAL NOT NULL,
    "cum_close_fee" DECIMAL NOT NULL,
    "cum_funding_fee" DECIMAL NOT NULL,
    "cum_liquidate_fee" DECIMAL NOT NULL,
    "created_match_sequence_id" DECIMAL(39,0) NOT NULL,
    "updated_match_sequence_id" DECIMAL(39,0) NOT NULL,
    "created_time" TIMESTAMPTZ(3) NOT NULL,
    "created_time_ms" BIGINT NOT NULL,
    "updated_time" TIMESTAMPTZ(3) NOT NULL,
    "updated_time_ms" BIGINT NOT NULL,
    "content_hash" TEXT NOT NULL,
    "raw" JSONB NOT NULL,
    "observed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "position_history_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "account_snapshots_account_coin_taken_idx" ON "account_snapshots"("account_name", "coin_id", "taken_at");

-- CreateIndex
CREATE INDEX "fee_settings_account_contract_to_idx" ON "fee_settings"("account_name", "contract_id", "valid_to");

-- CreateIndex
CREATE UNIQUE INDEX "fee_settings_account_contract_from_key" ON "fee_settings"("account_name", "contract_id", "valid_from");

-- CreateIndex
CREATE INDEX "mode_settings_account_contract_to_idx" ON "mode_settings"("account_name", "contract_id", "valid_to");

-- CreateIndex
CREATE UNIQUE INDEX "mode_settings_account_contract_from_key" ON "mode_settings"("account_name", "contract_id", "valid_from");

-- CreateIndex
CREATE INDEX "leverage_settings_account_contract_to_idx" ON "leverage_settings"("account_name", "contract_id", "valid_to");

-- CreateIndex
CREATE UNIQUE INDEX "leverage_settings_account_contract_from_key" ON "leverage_settings"("account_name", "contract_id", "valid_from");

-- CreateIndex
CREATE INDEX "collateral_history_account_coin_observed_idx" ON "collateral_history"("account_name", "coin_id", "observed_at");

-- CreateIndex
CREATE INDEX "collateral_history_observed_idx" ON "collateral_history"("observed_at");

-- CreateIndex
CREATE INDEX "positions_current_account_coin_closed_idx" ON "positions_current"("account_name", "coin_id", "closed_at");

-- CreateIndex
CREATE INDEX "position_history_account_position_observed_idx" ON "position_history"("account_name", "position_id", "observed_at");

-- CreateIndex
CREATE INDEX "position_history_observed_idx" ON "position_history"("observed_at");

-- Hand-written (Prisma's schema language cannot express partial indexes): at most one current
-- version (valid_to IS NULL) per account and contract in each settings table, guaranteed by the
-- database rather than by the writer alone.
CREATE UNIQUE INDEX "fee_settings_current_key" ON "fee_settings" ("account_name", "contract_id") WHERE "valid_to" IS NULL;
CREATE UNIQUE INDEX "mode_settings_current_key" ON "mode_settings" ("account_name", "contract_id") WHERE "valid_to" IS NULL;
CREATE UNIQUE INDEX "leverage_settings_current_key" ON "leverage_settings" ("account_name", "contract_id") WHERE "valid_to" IS NULL;
