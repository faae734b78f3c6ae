// The rules a coin's balances may follow from one bill to the next (balance-continuity.ts finds the
// one the data obeys).
export const RULES = {
  plain: "balance = previous balance + amount",
  minus_fee: "balance = previous balance + amount - fill_fee",
  plus_fee: "balance = previous balance + amount + fill_fee",
} as const;
export type Rule = keyof typeof RULES;
