// What the three tax tools' rows share: a bill is one movement of its coin, received when its
// amount is positive and sent when negative, with the absolute amount as the quantity; a bill of
// amount 0 (a liquidation's start and finish markers) moves nothing and has no row. Each tool labels
// a movement by its businessType's category (tax-categories.ts) and its side.
import { isKnownBusinessType } from "../exchange/business-types.ts";
import type { BillMovement } from "../store/bills-read.ts";
import { absoluteText, directionOf, isZeroText, type Direction } from "./amount-text.ts";
import { TAX_CATEGORY, type TaxCategory } from "./tax-categories.ts";

/** A tool's label for a category's inflows and outflows. */
export interface SideLabels<L> {
  in: L;
  out: L;
}

/** A tool's labels: every category, and a businessType the spec does not list. */
export type LabelTable<L> = Record<TaxCategory | "not in the spec", SideLabels<L>>;

export interface TaxMovement<L> {
  direction: Direction;
  /** The amount without its sign, digit for digit. */
  quantity: string;
  label: L;
}

/** The labels `table` gives a businessType. */
export function labelsOf<L>(table: LabelTable<L>, businessType: string): SideLabels<L> {
  return table[isKnownBusinessType(businessType) ? TAX_CATEGORY[businessType] : "not in the spec"];
}

/** The bill as a movement labelled from `table`; null for a bill of amount 0. */
export function taxMovement<L>(bill: BillMovement, table: LabelTable<L>): TaxMovement<L> | null {
  const direction = directionOf(bill.amount);
  if (direction === null) return null;
  return { direction, quantity: absoluteText(bill.amount), label: labelsOf(table, bill.businessType)[direction] };
}

/** The [quantity, coin] of the received and of the sent side; the other side's two fields empty. */
export function sides(m: TaxMovement<unknown>, coin: string): { received: string[]; sent: string[] } {
  const filled = [m.quantity, coin];
  return m.direction === "in" ? { received: filled, sent: ["", ""] } : { received: ["", ""], sent: filled };
}

/**
 * A short description: the businessType, the symbol, and the fill fee when there is one. The amount
 * is the bill's whole collateral change, fee included (balance = previous balance + amount, the
 * rule verify finds), so the fee is only said: in a tool's fee column the tool would take it twice.
 */
export function describeBill(bill: BillMovement): string {
  const symbol = bill.symbol === "" ? "" : ` ${bill.symbol}`;
  const fee = isZeroText(bill.fillFee) ? "" : ` (fill fee ${bill.fillFee} included)`;
  return `${bill.businessType}${symbol}${fee}`;
}
