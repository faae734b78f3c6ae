// What the three tax tools' rows share. A row is one movement of a coin, received when its amount is
// positive and sent when negative, with the absolute amount as the quantity; an amount of 0 moves
// nothing and has no row. A row is either a bill of its own or a round trip's net (round-trips.ts).
// Each tool labels a row by its category (tax-categories.ts) and its side.
import { isKnownBusinessType } from "../exchange/business-types.ts";
import type { BillMovement } from "../store/bills-read.ts";
import { absoluteText, directionOf, isZeroText, type Direction } from "./amount-text.ts";
import { TAX_CATEGORY, type TaxCategory } from "./tax-categories.ts";

/** A tool's label for a category's inflows and outflows. */
export interface SideLabels<L> {
  in: L;
  out: L;
}

export type RowCategory = TaxCategory | "not in the spec";

/** A tool's labels: every category, and a businessType the spec does not list. */
export type LabelTable<L> = Record<RowCategory, SideLabels<L>>;

/** How a round trip's end was found (docs/accounting-exports.md). */
export type TripEnd = "flat" | "unproven" | "per close";

export interface TripInfo {
  symbol: string;
  side: "long" | "short";
  /** Bills netted into the row. */
  bills: number;
  /** Σ fill_fee of those bills: already inside the amount. */
  fillFees: string;
  end: TripEnd;
}

export interface TaxRow {
  coin: string;
  /** Signed NUMERIC text. */
  amount: string;
  category: RowCategory;
  /** The bill that dates the row: the bill itself, or the round trip's last close. */
  at: Pick<BillMovement, "billId" | "createdAt" | "createdAtMs">;
  source: { bill: BillMovement } | { trip: TripInfo };
}

export interface TaxMovement<L> {
  direction: Direction;
  /** The amount without its sign, digit for digit. */
  quantity: string;
  label: L;
}

/** The category of a businessType, "not in the spec" for one the spec does not list. */
export function categoryOf(businessType: string): RowCategory {
  return isKnownBusinessType(businessType) ? TAX_CATEGORY[businessType] : "not in the spec";
}

/** The labels `table` gives a businessType. */
export function labelsOf<L>(table: LabelTable<L>, businessType: string): SideLabels<L> {
  return table[categoryOf(businessType)];
}

/** A bill's contract: NULL and the empty string both mean the bill belongs to none. */
export function contractSymbol(symbol: string | null): string | null {
  return symbol === null || symbol === "" ? null : symbol;
}

/** The row as a movement labelled from `table`; null for an amount of 0. */
export function taxMovement<L>(row: TaxRow, table: LabelTable<L>): TaxMovement<L> | null {
  const direction = directionOf(row.amount);
  if (direction === null) return null;
  return { direction, quantity: absoluteText(row.amount), label: table[row.category][direction] };
}

/** The [quantity, coin] of the received and of the sent side; the other side's two fields empty. */
export function sides(quantity: string, m: TaxMovement<unknown>, coin: string): { received: string[]; sent: string[] } {
  const filled = [quantity, coin];
  return m.direction === "in" ? { received: filled, sent: ["", ""] } : { received: ["", ""], sent: filled };
}

/**
 * A short description. A bill: its businessType, symbol, and fill fee when there is one. A bill's
 * amount is its whole collateral change, fee included (balance = previous balance + amount, the rule
 * verify finds), so the fee is only said: in a tool's fee column the tool would take it twice. A
 * round trip: its symbol, side, bills, fees included and how its end was found.
 */
export function describeRow(row: TaxRow): string {
  if ("bill" in row.source) {
    const bill = row.source.bill;
    const symbol = contractSymbol(bill.symbol);
    const fee = isZeroText(bill.fillFee) ? "" : ` (fill fee ${bill.fillFee} included)`;
    return `${bill.businessType}${symbol === null ? "" : ` ${symbol}`}${fee}`;
  }
  const t = row.source.trip;
  const fee = isZeroText(t.fillFees) ? "" : `, fill fees ${t.fillFees} included`;
  return `round trip ${t.symbol} ${t.side}: ${billsText(t.bills)}${fee}; ${TRIP_END_TEXT[t.end]}`;
}

export const billsText = (n: number): string => (n === 1 ? "1 bill" : `${n} bills`);

export const TRIP_END_TEXT: Record<TripEnd, string> = {
  flat: "flat at the next snapshot",
  unproven: "ends before the next snapshot (flatness not proven)",
  "per close": "ends at this close (no snapshot)",
};
