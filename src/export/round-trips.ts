// Nets each round trip of a (coin, symbol, side) into one row: its opens, its closes, and the moves
// bound to its symbol that carry no side (margin moves, liquidation bills), summed exactly and dated
// at the trip's last close. A trip ends at its last close before the next snapshot run, or at each
// close where no run can tell (before the account's first run, or an account without runs). Every
// other bill is a row of its own. State is one entry per trip under way, never the whole ledger.
// The rules and why they never lose money: docs/accounting-exports.md.
import type { BillMovement } from "../store/bills-read.ts";
import { ExactSum } from "./exact-sum.ts";
import { categoryOf, contractSymbol, type TaxRow, type TripEnd } from "./tax-row.ts";

type Side = "long" | "short";

const SIDED: Record<string, { side: Side; close: boolean }> = {
  position_open_long: { side: "long", close: false },
  position_open_short: { side: "short", close: false },
  position_close_long: { side: "long", close: true },
  position_close_short: { side: "short", close: true },
};

/** Bound to a symbol but to neither side: joined to a trip of that symbol under way, if any. */
export const SIDELESS_TYPES: ReadonlySet<string> = new Set([
  "margin_move_in",
  "margin_move_out",
  "start_liquidate",
  "finish_liquidate",
  "order_fix_margin_amount",
]);

/** A row's place in ledger order: the time, then the bill id as a number. */
export interface RowKey {
  ms: number;
  id: bigint;
}

export function keyOf(at: Pick<BillMovement, "billId" | "createdAtMs">): RowKey {
  return { ms: Number(at.createdAtMs), id: BigInt(at.billId) };
}

export function compareKeys(a: RowKey, b: RowKey): number {
  if (a.ms !== b.ms) return a.ms - b.ms;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

class Part {
  readonly sum = new ExactSum();
  readonly fees = new ExactSum();
  bills = 0;

  add(bill: BillMovement): void {
    this.sum.add(bill.amount);
    this.fees.add(bill.fillFee);
    this.bills++;
  }

  absorb(other: Part): void {
    this.sum.absorb(other.sum);
    this.fees.absorb(other.fees);
    this.bills += other.bills;
  }
}

interface Trip {
  coin: string;
  symbol: string;
  side: Side;
  /** Order of the trips' first bills: a sideless move joins the earlier trip. */
  seq: number;
  /** Everything up to the last close, and sideless moves after it while nothing has opened since. */
  head: Part;
  lastClose: BillMovement | null;
  /** From the first open after the last close: the next trip, should the trip end before it. */
  tail: Part | null;
}

export class RoundTrips {
  private readonly trips = new Map<string, Trip>();
  private seq = 0;

  constructor(private readonly emit: (row: TaxRow) => void) {}

  /** Takes the next bill in ledger order; `perClose`: no snapshot run can end its trip. */
  add(bill: BillMovement, perClose: boolean): void {
    const symbol = contractSymbol(bill.symbol);
    const sided = SIDED[bill.businessType];
    if (symbol !== null && sided !== undefined) return this.addSided(bill, symbol, sided.side, sided.close, perClose);
    const trip = symbol !== null && SIDELESS_TYPES.has(bill.businessType) ? this.tripOf(bill.coin, symbol) : undefined;
    if (trip === undefined) return this.emit(billRow(bill));
    (trip.lastClose !== null && trip.tail !== null ? trip.tail : trip.head).add(bill);
  }

  /** A snapshot run: every trip with a close ends at its last one; what opened since goes on. */
  snapshot(flat: Record<Side, boolean>): void {
    for (const trip of [...this.trips.values()])
      if (trip.lastClose !== null) this.end(trip, flat[trip.side] ? "flat" : "unproven");
  }

  /** The earliest key a row still to come can have: the first last close of a trip under way. */
  floor(): RowKey | null {
    let min: RowKey | null = null;
    for (const trip of this.trips.values()) {
      if (trip.lastClose === null) continue;
      const key = keyOf(trip.lastClose);
      if (min === null || compareKeys(key, min) < 0) min = key;
    }
    return min;
  }

  private addSided(bill: BillMovement, symbol: string, side: Side, close: boolean, perClose: boolean): void {
    const id = `${bill.coin}\u0000${symbol}\u0000${side}`;
    let trip = this.trips.get(id);
    if (trip === undefined) {
      trip = { coin: bill.coin, symbol, side, seq: this.seq++, head: new Part(), lastClose: null, tail: null };
      this.trips.set(id, trip);
    }
    if (!close) {
      if (trip.lastClose === null) trip.head.add(bill);
      else (trip.tail ??= new Part()).add(bill);
      return;
    }
    if (trip.tail !== null) trip.head.absorb(trip.tail);
    trip.tail = null;
    trip.head.add(bill);
    trip.lastClose = bill;
    if (perClose) this.end(trip, "per close");
  }

  /** The trip of the symbol under way on either side; the earlier one when both are. */
  private tripOf(coin: string, symbol: string): Trip | undefined {
    const [long, short] = (["long", "short"] as const).map((s) => this.trips.get(`${coin}\u0000${symbol}\u0000${s}`));
    if (long === undefined || short === undefined) return long ?? short;
    return long.seq < short.seq ? long : short;
  }

  private end(trip: Trip, end: TripEnd): void {
    const close = trip.lastClose!;
    this.emit({
      coin: trip.coin,
      amount: trip.head.sum.text(),
      category: "trading result",
      at: close,
      source: {
        trip: { symbol: trip.symbol, side: trip.side, bills: trip.head.bills, fillFees: trip.head.fees.text(), end },
      },
    });
    const id = `${trip.coin}\u0000${trip.symbol}\u0000${trip.side}`;
    if (trip.tail === null) {
      this.trips.delete(id);
      return;
    }
    this.trips.set(id, { ...trip, seq: this.seq++, head: trip.tail, lastClose: null, tail: null });
  }
}

function billRow(bill: BillMovement): TaxRow {
  return { coin: bill.coin, amount: bill.amount, category: categoryOf(bill.businessType), at: bill, source: { bill } };
}
