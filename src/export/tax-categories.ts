// What each businessType of spec 4.1 is to a tax tool, one category each; every tool then labels a
// category, so the three tools' files read the ledger alike.
import type { BusinessType } from "../exchange/business-types.ts";

export type TaxCategory =
  /** Money moved between the user's own accounts, or within this one: no gain and no income. */
  | "own transfer"
  /** The contract's trading result: each collateral change of opening, closing, funding and
   *  liquidation; only their sum over a position's round trip is its profit or loss. */
  | "trading result"
  /** Fee income of a fee account, and what a lead trader or the commission account receives. */
  | "income"
  /** Profit a lead trader shares with others: an expense. */
  | "profit share"
  /** A follower's copy-trading deduction from a profitable close, and its refund. */
  | "copy-trading deduction";

export const TAX_CATEGORY: Record<BusinessType, TaxCategory> = {
  deposit: "own transfer",
  withdraw: "own transfer",
  transfer_in: "own transfer",
  transfer_out: "own transfer",
  margin_move_in: "own transfer",
  margin_move_out: "own transfer",
  position_open_long: "trading result",
  position_open_short: "trading result",
  position_close_long: "trading result",
  position_close_short: "trading result",
  position_funding: "trading result",
  order_fill_fee_income: "income",
  order_liquidate_fee_income: "income",
  start_liquidate: "trading result",
  finish_liquidate: "trading result",
  order_fix_margin_amount: "trading result",
  tracking_follow_pay: "copy-trading deduction",
  tracking_system_pre_receive: "income",
  tracking_follow_back: "copy-trading deduction",
  tracking_trader_income: "income",
  tracking_third_party_share: "profit share",
};
