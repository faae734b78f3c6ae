// The account endpoint's response (spec 2.3–2.7), validated once where it enters. Field names stay
// the spec's snake_case: they are the column names of the snapshot tables (the BI contract).
// Tolerant where the spec says so (null default_fee_setting, empty strings, numbers as strings or
// numbers, unknown extra fields kept in raw); strict where it matters (ids, decimals, times).
import { z } from "zod";
import { bool, decimal, digits, epochMs, integerText, text } from "./lossless-fields.ts";

export const feeSetting = z.looseObject({
  contract_id: digits.optional(),
  is_set_fee_rate: bool,
  taker_fee_rate: decimal,
  maker_fee_rate: decimal,
  is_set_fee_discount: bool,
  fee_discount: decimal,
  is_set_taker_maker_fee_discount: bool,
  taker_fee_discount: decimal,
  maker_fee_discount: decimal,
});

export const modeSetting = z.looseObject({
  contract_id: digits.optional(),
  margin_mode: text,
  separated_mode: text,
  position_mode: text,
});

export const leverageSetting = z.looseObject({
  contract_id: digits.optional(),
  isolated_long_leverage: decimal,
  isolated_short_leverage: decimal,
  cross_leverage: decimal,
  shared_leverage: decimal,
});

/** Map keyed by contract id; the key is the contract id when the entry omits or agrees with it. */
function byContract<T extends z.ZodType<{ contract_id?: string | undefined }>>(entry: T) {
  return z
    .record(z.string().regex(/^[0-9]{1,78}$/, "contract id key must be digits"), entry)
    .superRefine((map, ctx) => {
      for (const [key, value] of Object.entries(map)) {
        if (value.contract_id !== undefined && value.contract_id !== key) {
          ctx.addIssue({ code: "custom", path: [key, "contract_id"], message: `disagrees with its map key ${key}` });
        }
      }
    });
}

export const accountRecord = z.looseObject({
  id: digits,
  user_id: digits,
  client_account_id: text,
  is_system_account: bool,
  default_fee_setting: feeSetting.nullable().optional(),
  contract_id_to_fee_setting: byContract(feeSetting),
  contract_id_to_mode_setting: byContract(modeSetting),
  contract_id_to_leverage_setting: byContract(leverageSetting),
  create_order_rate_limit_per_minute: integerText,
  create_order_delay_milliseconds: integerText,
  extra_type: text,
  extra_data_json: text,
  status: text,
  created_time: epochMs,
  updated_time: epochMs,
});

// margin_mode is part of collateral_current's primary key: a btree entry holds at most 2704 bytes.
export const indexedText = z
  .string()
  .min(1, "is empty")
  .refine((t) => Buffer.byteLength(t, "utf8") <= 1024, "is longer than 1024 bytes (PostgreSQL cannot index it)");

export const collateralRecord = z.looseObject({
  account_id: digits,
  coin_id: digits,
  margin_mode: indexedText,
  cross_contract_id: digits,
  isolated_position_id: digits,
  amount: decimal,
  pending_deposit_amount: decimal,
  pending_withdraw_amount: decimal,
  pending_transfer_in_amount: decimal,
  pending_transfer_out_amount: decimal,
  is_liquidating: bool,
  legacy_amount: decimal,
  cum_deposit_amount: decimal,
  cum_withdraw_amount: decimal,
  cum_transfer_in_amount: decimal,
  cum_transfer_out_amount: decimal,
  cum_margin_move_in_amount: decimal,
  cum_margin_move_out_amount: decimal,
  cum_position_open_long_amount: decimal,
  cum_position_open_short_amount: decimal,
  cum_position_close_long_amount: decimal,
  cum_position_close_short_amount: decimal,
  cum_position_fill_fee_amount: decimal,
  cum_position_liquidate_fee_amount: decimal,
  cum_position_funding_amount: decimal,
  cum_order_fill_fee_income_amount: decimal,
  cum_order_liquidate_fee_income_amount: decimal,
  created_time: epochMs,
  updated_time: epochMs,
});

// Sequence ids are stored as NUMERIC(39,0): at most 39 digits.
const sequenceId = digits.refine((d) => d.replace(/^0+(?=\d)/, "").length <= 39, "has more than 39 digits");

export const positionRecord = z.looseObject({
  id: digits,
  account_id: digits,
  coin_id: digits,
  contract_id: digits,
  side: z.string().min(1, "is empty"),
  margin_mode: text,
  separated_mode: text,
  separated_open_order_id: digits,
  leverage: decimal,
  size: decimal,
  open_value: decimal,
  open_fee: decimal,
  funding_fee: decimal,
  isolated_margin: decimal,
  is_auto_append_isolated_margin: bool,
  cum_open_size: decimal,
  cum_open_value: decimal,
  cum_open_fee: decimal,
  cum_close_size: decimal,
  cum_close_value: decimal,
  cum_close_fee: decimal,
  cum_funding_fee: decimal,
  cum_liquidate_fee: decimal,
  created_match_sequence_id: sequenceId,
  updated_match_sequence_id: sequenceId,
  created_time: epochMs,
  updated_time: epochMs,
});

export const accountResponseSchema = z
  .looseObject({
    account: accountRecord,
    collateral: z.array(collateralRecord),
    position: z.array(positionRecord),
    version: z.union([z.string(), digits]),
  })
  .superRefine((r, ctx) => uniquePositions(r.position, ctx));

/** Each position id once: it is positions_current's key. */
export function uniquePositions(positions: readonly { id: string }[] | null | undefined, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  positions?.forEach((p, i) => {
    if (seen.has(p.id))
      ctx.addIssue({ code: "custom", path: ["position", i, "id"], message: `position id ${p.id} appears twice` });
    seen.add(p.id);
  });
}

export type AccountResponse = z.output<typeof accountResponseSchema>;
export type AccountRecord = z.output<typeof accountRecord>;
export type FeeSettingRecord = z.output<typeof feeSetting>;
export type CollateralRecord = z.output<typeof collateralRecord>;
export type PositionRecord = z.output<typeof positionRecord>;

/**
 * One coin's snapshot as either form of the account endpoint gives it (account-endpoint.ts,
 * account-public.ts). What a form does not carry is null, never invented: the public form may
 * carry no account record and no positions, and its `version` is null.
 */
export interface AccountSnapshot {
  account: AccountRecord | null;
  /** cross_symbol: the public form's crossSymbol ("" or absent: none). */
  collateral: (CollateralRecord & { cross_symbol?: string })[];
  position: PositionRecord[] | null;
  version: string | null;
}

export type AccountSnapshotFetch =
  { ok: true; response: AccountSnapshot; raw: unknown } | { ok: false; reason: string; rawText: string };
