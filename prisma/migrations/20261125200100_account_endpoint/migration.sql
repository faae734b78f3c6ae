-- AlterTable
ALTER TABLE "collateral_current" DROP CONSTRAINT "collateral_current_pkey",
ADD COLUMN     "cross_symbol" TEXT NOT NULL DEFAULT '',
ADD CONSTRAINT "collateral_current_pkey"
  PRIMARY KEY ("account_name", "coin_id", "margin_mode", "cross_contract_id", "cross_symbol", "isolated_position_id");

-- AlterTable
ALTER TABLE "collateral_history" ADD COLUMN     "cross_symbol" TEXT NOT NULL DEFAULT '';

-- AlterTable
ALTER TABLE "exchange_profiles" ADD COLUMN     "account_endpoint" TEXT,
ADD COLUMN     "v3_balance_served" BOOLEAN;

-- Hand-written: the only values account_endpoint may hold (Prisma has no CHECK constraints).
ALTER TABLE "exchange_profiles" ADD CONSTRAINT "exchange_profiles_account_endpoint_check"
  CHECK ("account_endpoint" IN ('seed', 'public'));
