// Field lists of the account endpoint's records (spec 2.4–2.6), each with the kind that decides
// how it may be written in JSON. One table drives three jobs so they cannot drift apart: the
// encoder's key order and encodings, the validation of states scripted through mutateAccount,
// and the tests' field-by-field comparison.
import type { SandboxAccountState } from "./types.ts";

/** id: digit string, always sent as a JSON string (spec: ids are strings, and many exceed 2^53);
 *  int: spec "integer", sent as a JSON number or a digit string; dec: decimal text, normally a
 *  JSON string; time: 13-digit ms text, always a JSON string; text: free string; bool. */
export type FieldKind = "id" | "int" | "dec" | "time" | "text" | "bool";
export type Fields = readonly (readonly [string, FieldKind])[];

const decs = (...names: string[]): [string, FieldKind][] => names.map((n) => [n, "dec"]);

export const FEE_FIELDS: Fields = [
  ["contract_id", "id"],
  ["is_set_fee_rate", "bool"],
  ["taker_fee_rate", "dec"],
  ["maker_fee_rate", "dec"],
  ["is_set_fee_discount", "bool"],
  ["fee_discount", "dec"],
  ["is_set_taker_maker_fee_discount", "bool"],
  ["taker_fee_discount", "dec"],
  ["maker_fee_discount", "dec"],
];
export const MODE_FIELDS: Fields = [
  ["contract_id", "id"],
  ["margin_mode", "text"],
  ["separated_mode", "text"],
  ["position_mode", "text"],
];
export const LEVERAGE_FIELDS: Fields = [
  ["contract_id", "id"],
  ...decs("isolated_long_leverage", "isolated_short_leverage", "cross_leverage", "shared_leverage"),
];

/** Scalar fields of the account record; default_fee_setting and the three maps are handled
 *  apart (the encoder places them after is_system_account, in spec order). */
export const ACCOUNT_SCALARS_HEAD: Fields = [
  ["id", "id"],
  ["user_id", "id"],
  ["client_account_id", "id"],
  ["is_system_account", "bool"],
];
export const ACCOUNT_SCALARS_TAIL: Fields = [
  ["create_order_rate_limit_per_minute", "int"],
  ["create_order_delay_milliseconds", "int"],
  ["extra_type", "text"],
  ["extra_data_json", "text"],
  ["status", "text"],
  ["created_time", "time"],
  ["updated_time", "time"],
];

/** cum_* fields of a collateral record, in spec order (account-history.ts sums bills into them). */
export const CUM_FIELDS = [
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
] as const;
export type CumField = (typeof CUM_FIELDS)[number];

export const COLLATERAL_FIELDS: Fields = [
  ["account_id", "id"],
  ["coin_id", "int"],
  ["margin_mode", "text"],
  ["cross_contract_id", "int"],
  ["isolated_position_id", "id"],
  ...decs(
    "amount",
    "pending_deposit_amount",
    "pending_withdraw_amount",
    "pending_transfer_in_amount",
    "pending_transfer_out_amount",
  ),
  ["is_liquidating", "bool"],
  ["legacy_amount", "dec"],
  ...decs(...CUM_FIELDS),
  ["created_time", "time"],
  ["updated_time", "time"],
];

export const POSITION_FIELDS: Fields = [
  ["id", "id"],
  ["account_id", "id"],
  ["coin_id", "int"],
  ["contract_id", "int"],
  ["side", "text"],
  ["margin_mode", "text"],
  ["separated_mode", "text"],
  ["separated_open_order_id", "id"],
  ...decs("leverage", "size", "open_value", "open_fee", "funding_fee", "isolated_margin"),
  ["is_auto_append_isolated_margin", "bool"],
  ...decs(
    "cum_open_size",
    "cum_open_value",
    "cum_open_fee",
    "cum_close_size",
    "cum_close_value",
    "cum_close_fee",
    "cum_funding_fee",
    "cum_liquidate_fee",
  ),
  ["created_match_sequence_id", "id"],
  ["updated_match_sequence_id", "id"],
  ["created_time", "time"],
  ["updated_time", "time"],
];

const DIGITS = /^\d+$/;
const INT = /^-?\d+$/;
const DEC = /^-?\d+(\.\d+)?$/;

function checkValue(where: string, kind: FieldKind, v: unknown): void {
  const ok =
    kind === "bool"
      ? typeof v === "boolean"
      : kind === "text"
        ? typeof v === "string"
        : kind === "int"
          ? (typeof v === "string" && INT.test(v)) || (typeof v === "number" && Number.isSafeInteger(v))
          : kind === "dec"
            ? typeof v === "string" && DEC.test(v)
            : typeof v === "string" && DIGITS.test(v); // id, time
  if (!ok)
    throw new Error(
      `account state: ${where} must be ${
        kind === "int"
          ? "an integer"
          : kind === "dec"
            ? "decimal text"
            : kind === "bool"
              ? "a boolean"
              : kind === "text"
                ? "a string"
                : "a digit string"
      }, got ${JSON.stringify(v)}`,
    );
}

/** Exactly the listed keys, each of the right kind: a typo in a scripted change fails loudly
 *  instead of silently serving something else. */
export function checkRecord(where: string, rec: unknown, fields: Fields): void {
  if (typeof rec !== "object" || rec === null || Array.isArray(rec))
    throw new Error(`account state: ${where} must be an object`);
  const r = rec as Record<string, unknown>;
  const known = new Set(fields.map(([n]) => n));
  for (const k of Object.keys(r)) if (!known.has(k)) throw new Error(`account state: ${where} has unknown field ${k}`);
  for (const [name, kind] of fields) checkValue(`${where}.${name}`, kind, r[name]);
}

function checkList(where: string, list: unknown, fields: Fields, uniqueKey: string | null): void {
  if (!Array.isArray(list)) throw new Error(`account state: ${where} must be an array`);
  const seen = new Set<unknown>();
  list.forEach((rec, i) => {
    checkRecord(`${where}[${i}]`, rec, fields);
    if (uniqueKey === null) return;
    const key = (rec as Record<string, unknown>)[uniqueKey];
    // Map keys (contract ids) and position ids must be unique, or the JSON would be ambiguous.
    if (seen.has(key)) throw new Error(`account state: ${where} has duplicate ${uniqueKey} ${String(key)}`);
    seen.add(key);
  });
}

export function checkState(s: SandboxAccountState): void {
  if (typeof s.version !== "string" || !DIGITS.test(s.version))
    throw new Error(`account state: version must be a digit string, got ${JSON.stringify(s.version)}`);
  const known = new Set(["version", "account", "collateral", "positions"]);
  for (const k of Object.keys(s)) if (!known.has(k)) throw new Error(`account state: unknown top-level field ${k}`);
  const a = s.account as unknown as Record<string, unknown>;
  const accountFields: Fields = [...ACCOUNT_SCALARS_HEAD, ...ACCOUNT_SCALARS_TAIL];
  const rest = Object.fromEntries(accountFields.map(([n]) => [n, a[n]]));
  checkRecord("account", rest, accountFields);
  const structured = new Set(["default_fee_setting", "fees", "modes", "leverages", ...accountFields.map(([n]) => n)]);
  for (const k of Object.keys(a))
    if (!structured.has(k)) throw new Error(`account state: account has unknown field ${k}`);
  if (a.default_fee_setting !== null) checkRecord("account.default_fee_setting", a.default_fee_setting, FEE_FIELDS);
  checkList("account.fees", a.fees, FEE_FIELDS, "contract_id");
  checkList("account.modes", a.modes, MODE_FIELDS, "contract_id");
  checkList("account.leverages", a.leverages, LEVERAGE_FIELDS, "contract_id");
  checkList("collateral", s.collateral, COLLATERAL_FIELDS, null);
  checkList("positions", s.positions, POSITION_FIELDS, "id");
}
