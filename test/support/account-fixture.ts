// A spec-shaped (2.3–2.6) account response for tests, as a plain object to mutate and serialise.
export interface PositionFixture {
  id: string;
  contract_id: number;
  size: string;
  funding_fee: string;
  updated_match_sequence_id: string;
  updated_time: string;
}

export function position(p: Partial<PositionFixture> & { id: string }) {
  return {
    id: p.id,
    account_id: "676349887417286722",
    coin_id: 2,
    contract_id: p.contract_id ?? 10000001,
    side: "LONG",
    margin_mode: "SHARED",
    separated_mode: "COMBINED",
    separated_open_order_id: "0",
    leverage: "20",
    size: p.size ?? "0.5",
    open_value: "30000.12345678",
    open_fee: "18.0000741",
    funding_fee: p.funding_fee ?? "0",
    isolated_margin: "0",
    is_auto_append_isolated_margin: false,
    cum_open_size: "0.5",
    cum_open_value: "30000.12345678",
    cum_open_fee: "18.0000741",
    cum_close_size: "0",
    cum_close_value: "0",
    cum_close_fee: "0",
    cum_funding_fee: "0",
    cum_liquidate_fee: "0",
    created_match_sequence_id: "9223372036854775809",
    updated_match_sequence_id: p.updated_match_sequence_id ?? "9223372036854775810",
    created_time: "1735689600000",
    updated_time: p.updated_time ?? "1735689600000",
  };
}

export function accountResponse() {
  return {
    account: {
      id: "676349887417286722",
      user_id: "4015867359",
      client_account_id: "",
      is_system_account: false,
      default_fee_setting: null as null | Record<string, unknown>,
      contract_id_to_fee_setting: {
        "10000001": {
          contract_id: "10000001",
          is_set_fee_rate: true,
          taker_fee_rate: "0.0006",
          maker_fee_rate: "0.0002",
          is_set_fee_discount: false,
          fee_discount: "1",
          is_set_taker_maker_fee_discount: false,
          taker_fee_discount: "1",
          maker_fee_discount: "1",
        },
      } as Record<string, Record<string, unknown>>,
      contract_id_to_mode_setting: {
        "10000001": {
          contract_id: "10000001",
          margin_mode: "SHARED",
          separated_mode: "COMBINED",
          position_mode: "HEDGE",
        },
      },
      contract_id_to_leverage_setting: {
        "10000001": {
          contract_id: "10000001",
          isolated_long_leverage: "20",
          isolated_short_leverage: "20",
          cross_leverage: "20",
          shared_leverage: "20",
        },
      },
      create_order_rate_limit_per_minute: 600,
      create_order_delay_milliseconds: 0,
      extra_type: "",
      extra_data_json: "",
      status: "NORMAL",
      created_time: "1735689600000",
      updated_time: "1735689600000",
    },
    collateral: [
      {
        account_id: "676349887417286722",
        coin_id: 2,
        margin_mode: "SHARED",
        cross_contract_id: 0,
        isolated_position_id: "0",
        amount: "12345.67890123",
        pending_deposit_amount: "0",
        pending_withdraw_amount: "0",
        pending_transfer_in_amount: "0",
        pending_transfer_out_amount: "0",
        is_liquidating: false,
        legacy_amount: "0",
        cum_deposit_amount: "150000",
        cum_withdraw_amount: "-42000.5",
        cum_transfer_in_amount: "0",
        cum_transfer_out_amount: "0",
        cum_margin_move_in_amount: "0",
        cum_margin_move_out_amount: "0",
        cum_position_open_long_amount: "0",
        cum_position_open_short_amount: "0",
        cum_position_close_long_amount: "0",
        cum_position_close_short_amount: "0",
        cum_position_fill_fee_amount: "-12.5",
        cum_position_liquidate_fee_amount: "0",
        cum_position_funding_amount: "0",
        cum_order_fill_fee_income_amount: "0",
        cum_order_liquidate_fee_income_amount: "0",
        created_time: "1735689600000",
        updated_time: "1735689600000",
      },
    ],
    position: [position({ id: "687001234567890123" })],
    version: "1",
  };
}

export type AccountResponseFixture = ReturnType<typeof accountResponse>;
