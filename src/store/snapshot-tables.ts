// The snapshot tables' content columns: which spec fields each table stores and as what type.
// One definition serves the mapping (which fields are content and hashed) and the SQL.

export type PgType = "text" | "numeric" | "boolean" | "bigint";
export type Columns = readonly (readonly [name: string, type: PgType])[];

/** Time fields arrive as epoch-ms text; each is stored as <name> timestamptz and <name>_ms bigint. */
export const TIME_FIELDS = ["created_time", "updated_time"] as const;

const numeric = (...names: string[]) => names.map((n) => [n, "numeric"] as const);

export const ACCOUNT_COLUMNS: Columns = [
  ["account_id", "text"],
  ["user_id", "text"],
  ["client_account_id", "text"],
  ["is_system_account", "boolean"],
  ["create_order_rate_limit_per_minute", "bigint"],
  ["create_order_delay_milliseconds", "bigint"],
  ["extra_type", "text"],
  ["extra_data_json", "text"],
  ["status", "text"],
];

export const FEE_COLUMNS: Columns = [
  ["is_set_fee_rate", "boolean"],
  ...numeric("taker_fee_rate", "maker_fee_rate"),
  ["is_set_fee_discount", "boolean"],
  ...numeric("fee_discount"),
  ["is_set_taker_maker_fee_discount", "boolean"],
  ...numeric("taker_fee_discount", "maker_fee_discount"),
];

export const MODE_COLUMNS: Columns = [
  ["margin_mode", "text"],
  ["separated_mode", "text"],
  ["position_mode", "text"],
];

export const LEVERAGE_COLUMNS: Columns = numeric(
  "isolated_long_leverage",
  "isolated_short_leverage",
  "cross_leverage",
  "shared_leverage",
);

/** cross_symbol: the public form's crossSymbol ("" from the seed form); see docs/schema.md. */
export const COLLATERAL_KEY = [
  "coin_id",
  "margin_mode",
  "cross_contract_id",
  "cross_symbol",
  "isolated_position_id",
] as const;
export const COLLATERAL_COLUMNS: Columns = [
  ["coin_id", "text"],
  ["margin_mode", "text"],
  ["cross_contract_id", "text"],
  ["cross_symbol", "text"],
  ["isolated_position_id", "text"],
  ["account_id", "text"],
  ...numeric(
    "amount",
    "pending_deposit_amount",
    "pending_withdraw_amount",
    "pending_transfer_in_amount",
    "pending_transfer_out_amount",
  ),
  ["is_liquidating", "boolean"],
  ...numeric(
    "legacy_amount",
    "cum_deposit_amount",
    "cum_withdraw_amount",
    "cum_transfer_in_amount",
    "cum_transfer_out_amount",
    "cum_margin_move_in_amount",
    "cum_margin_move_out_amount",
    "cum_position_open_long_amount",
    "cum_position_open_short_amount",
    "cum_position_close_long_amount",
    "cum_position_close_short_amount",
    "cum_position_fill_fee_amount",
    "cum_position_liquidate_fee_amount",
    "cum_position_funding_amount",
    "cum_order_fill_fee_income_amount",
    "cum_order_liquidate_fee_income_amount",
  ),
];

/** Positions: the spec's `id` is stored as position_id. */
export const POSITION_COLUMNS: Columns = [
  ["position_id", "text"],
  ["coin_id", "text"],
  ["contract_id", "text"],
  ["account_id", "text"],
  ["side", "text"],
  ["margin_mode", "text"],
  ["separated_mode", "text"],
  ["separated_open_order_id", "text"],
  ...numeric("leverage", "size", "open_value", "open_fee", "funding_fee", "isolated_margin"),
  ["is_auto_append_isolated_margin", "boolean"],
  ...numeric(
    "cum_open_size",
    "cum_open_value",
    "cum_open_fee",
    "cum_close_size",
    "cum_close_value",
    "cum_close_fee",
    "cum_funding_fee",
    "cum_liquidate_fee",
  ),
  ["created_match_sequence_id", "numeric"],
  ["updated_match_sequence_id", "numeric"],
];

/** A row as the writer receives it: column values as text/boolean, plus hash and raw. */
export interface SnapshotRow {
  [column: string]: unknown;
  content_hash: string;
  raw: unknown;
}
