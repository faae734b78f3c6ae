// The businessType values the spec lists (4.1). The list is also the one complete partition of a
// millisecond's bills that the API lets us enumerate (see streams/bills-v2/millisecond-split.ts).
export const BUSINESS_TYPES = [
  "deposit",
  "withdraw",
  "transfer_in",
  "transfer_out",
  "margin_move_in",
  "margin_move_out",
  "position_open_long",
  "position_open_short",
  "position_close_long",
  "position_close_short",
  "position_funding",
  "order_fill_fee_income",
  "order_liquidate_fee_income",
  "start_liquidate",
  "finish_liquidate",
  "order_fix_margin_amount",
  "tracking_follow_pay",
  "tracking_system_pre_receive",
  "tracking_follow_back",
  "tracking_trader_income",
  "tracking_third_party_share",
] as const;

export type BusinessType = (typeof BUSINESS_TYPES)[number];

const KNOWN = new Set<string>(BUSINESS_TYPES);

export function isKnownBusinessType(value: string): value is BusinessType {
  return KNOWN.has(value);
}
