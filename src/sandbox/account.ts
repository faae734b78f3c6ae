// GET /capi/v2/account/account?coinId=...: a fixed, plausible record shaped as spec 2.3–2.6
// (account with its settings maps, one collateral, one position, a version string). Only the
// collateral amount follows the history (the latest balance of the coin). A later issue makes
// the record evolve; it is kept here, apart from the bill machinery, for that reason.
import { COIN_IDS } from "./catalog.ts";

const ACCOUNT_ID = "676349887417286722";
const USER_ID = "4015867359";
const CREATED = "1735689600000";
const CONTRACT_IDS: Readonly<Record<string, number>> = { USDT: 10000001, USDC: 10000101 };

export function parseCoinId(query: URLSearchParams): number | null {
  const v = query.get("coinId");
  if (v === null || !/^\d{1,15}$/.test(v)) return null;
  return Number(v);
}

/** Coin name of a coinId, or undefined for ids the account holds nothing in. */
export function coinOfId(coinId: number): string | undefined {
  return Object.keys(COIN_IDS).find((c) => COIN_IDS[c] === coinId);
}

export function accountRecordJson(coinId: number, latestBalance: string | undefined, nowMs: number): string {
  const coin = coinOfId(coinId);
  const contractId = coin === undefined ? undefined : CONTRACT_IDS[coin];
  const updated = String(nowMs);
  const cid = String(contractId ?? 10000001);
  const record = {
    account: {
      id: ACCOUNT_ID,
      user_id: USER_ID,
      client_account_id: "0",
      is_system_account: false,
      default_fee_setting: null,
      contract_id_to_fee_setting: {
        [cid]: {
          contract_id: cid, is_set_fee_rate: true, taker_fee_rate: "0.0006", maker_fee_rate: "0.0002",
          is_set_fee_discount: false, fee_discount: "1", is_set_taker_maker_fee_discount: false,
          taker_fee_discount: "1", maker_fee_discount: "1",
        },
      },
      contract_id_to_mode_setting: { [cid]: { contract_id: cid, margin_mode: "SHARED", separated_mode: "COMBINED", position_mode: "HEDGE" } },
      contract_id_to_leverage_setting: {
        [cid]: { contract_id: cid, isolated_long_leverage: "20", isolated_short_leverage: "20", cross_leverage: "20", shared_leverage: "20" },
      },
      create_order_rate_limit_per_minute: 600,
      create_order_delay_milliseconds: 0,
      extra_type: "",
      extra_data_json: "",
      status: "NORMAL",
      created_time: CREATED,
      updated_time: updated,
    },
    collateral: coin === undefined ? [] : [collateral(coinId, latestBalance ?? "0", updated)],
    position: coin === undefined || contractId === undefined ? [] : [position(coinId, contractId, updated)],
    version: "1",
  };
  return JSON.stringify(record);
}

function collateral(coinId: number, amount: string, updated: string): Record<string, unknown> {
  const zero = "0";
  return {
    account_id: ACCOUNT_ID, coin_id: coinId, margin_mode: "SHARED", cross_contract_id: 0, isolated_position_id: "0",
    amount, pending_deposit_amount: zero, pending_withdraw_amount: zero, pending_transfer_in_amount: zero,
    pending_transfer_out_amount: zero, is_liquidating: false, legacy_amount: zero,
    cum_deposit_amount: "150000", cum_withdraw_amount: "-42000.5", cum_transfer_in_amount: "12000",
    cum_transfer_out_amount: "-8000", cum_margin_move_in_amount: "5300.25", cum_margin_move_out_amount: "-5100.25",
    cum_position_open_long_amount: "-912345.678", cum_position_open_short_amount: "845678.9012",
    cum_position_close_long_amount: "915432.1", cum_position_close_short_amount: "-850123.45",
    cum_position_fill_fee_amount: "-1067.4421", cum_position_liquidate_fee_amount: zero,
    cum_position_funding_amount: "-123.456789", cum_order_fill_fee_income_amount: zero,
    cum_order_liquidate_fee_income_amount: zero, created_time: CREATED, updated_time: updated,
  };
}

function position(coinId: number, contractId: number, updated: string): Record<string, unknown> {
  return {
    id: "687001234567890123", account_id: ACCOUNT_ID, coin_id: coinId, contract_id: contractId, side: "LONG",
    margin_mode: "SHARED", separated_mode: "COMBINED", separated_open_order_id: "0", leverage: "20",
    size: "0.015", open_value: "918.5025", open_fee: "-0.5511015", funding_fee: "-0.0421",
    isolated_margin: "0", is_auto_append_isolated_margin: false, cum_open_size: "0.015",
    cum_open_value: "918.5025", cum_open_fee: "-0.5511015", cum_close_size: "0", cum_close_value: "0",
    cum_close_fee: "0", cum_funding_fee: "-0.0421", cum_liquidate_fee: "0",
    created_match_sequence_id: "2840123456", updated_match_sequence_id: "2840129876",
    created_time: CREATED, updated_time: updated,
  };
}
