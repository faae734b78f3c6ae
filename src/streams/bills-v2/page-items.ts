// Folding pages into the set of bills of one window: range filtering, duplicates, conflicts.
import type { Bill, RejectedItem } from "../../exchange/bill-item.ts";
import type { BillsPage } from "../../exchange/bills-endpoint.ts";

/** Same bill id, same content? (raw may differ in encoding; the content is what we store.) */
export function sameContent(a: Bill, b: Bill): boolean {
  return (
    a.coin === b.coin &&
    a.symbol === b.symbol &&
    a.businessType === b.businessType &&
    a.amount === b.amount &&
    a.balance === b.balance &&
    a.fillFee === b.fillFee &&
    a.cTimeMs === b.cTimeMs
  );
}

/**
 * Collects the bills of one window [fromMs, toMs] from any number of pages. Items outside the range
 * are kept: a padded query's neighbours (stored again, idempotently) and, on an exchange that
 * filters on a time of its own, bills that no other window would return. One page that lists a
 * bill id twice with different content is not trusted for that id: every version is quarantined.
 * Across pages the later answer wins (the exchange's newest word).
 */
export class WindowItems {
  private readonly bills = new Map<string, Bill>();
  private readonly rejected = new Map<string, RejectedItem>();
  private readonly conflicted = new Set<string>();
  readonly coins = new Set<string>();
  readonly symbolsByCoin = new Map<string, Set<string>>();

  constructor(
    readonly fromMs: number,
    readonly toMs: number,
  ) {}

  /** Adds a page; returns the ids of its bills (for split coverage checks). */
  add(page: BillsPage): Set<string> {
    for (const r of page.rejected) this.rejected.set(r.rawText, r);
    const inPage = new Map<string, Bill>();
    const conflictsHere = new Set<string>();
    for (const b of page.bills) {
      this.noteDimensions(b);
      const prev = inPage.get(b.billId);
      if (prev && !sameContent(prev, b)) conflictsHere.add(b.billId);
      inPage.set(b.billId, b);
    }
    for (const b of page.bills) {
      if (conflictsHere.has(b.billId)) {
        const rawText = b.rawText ?? JSON.stringify(b.raw);
        this.rejected.set(rawText, {
          rawText,
          reason: `bill id ${b.billId} appears twice in one response with different content`,
          cTimeMs: b.cTimeMs,
        });
      }
    }
    for (const id of conflictsHere) {
      inPage.delete(id);
      this.bills.delete(id);
      this.conflicted.add(id);
    }
    const ids = new Set(inPage.keys());
    for (const id of conflictsHere) ids.add(id);
    for (const [id, b] of inPage) if (!this.conflicted.has(id)) this.bills.set(id, b);
    return ids;
  }

  result(): { bills: Bill[]; rejected: RejectedItem[] } {
    return { bills: [...this.bills.values()], rejected: [...this.rejected.values()] };
  }

  /** A bill with no contract (symbol null) adds no symbol: null is not a value the filter can ask for. */
  private noteDimensions(b: Bill): void {
    this.coins.add(b.coin);
    let set = this.symbolsByCoin.get(b.coin);
    if (!set) this.symbolsByCoin.set(b.coin, (set = new Set()));
    if (b.symbol !== null) set.add(b.symbol);
  }
}
