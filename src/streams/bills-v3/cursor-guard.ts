// What makes paging by the exchange's cursor safe: every page must move the cursor strictly
// forward, in one direction for the whole range, and every item must lie inside the range asked.
// Otherwise the run fails by name: a cursor that repeats would loop for ever, one that goes back
// would re-read (harmless) or skip (not), and an item outside the range means the range proves
// nothing. Order is not documented (probably newest first): the first step sets the direction.
import type { IncomeCursor, IncomePage } from "../../exchange/income-endpoint.ts";

/** Pages one range may take before the run stops (10,000,000 bills at 100 a page). */
export const MAX_PAGES_PER_RANGE = 100_000;

export class CursorError extends Error {
  override name = "CursorError";
  constructor(range: { fromMs: number; toMs: number }, detail: string) {
    super(
      "the exchange's cursor cannot be trusted over " +
        `${new Date(range.fromMs).toISOString()} .. ${new Date(range.toMs).toISOString()}: ${detail}; ` +
        "stopping rather than loop or skip bills " +
        "(set BILLS_SOURCE=v2 for this account to sync it through the other endpoint)",
    );
  }
}

export class CursorGuard {
  private readonly seen = new Set<string>();
  private last: IncomeCursor | undefined;
  private direction: 1 | -1 | undefined;
  private pages = 0;

  constructor(
    private readonly range: { fromMs: number; toMs: number },
    start?: IncomeCursor,
  ) {
    if (start) this.step(start);
  }

  /** Checks a page before anything of it is written. */
  check(page: IncomePage): void {
    if (++this.pages > MAX_PAGES_PER_RANGE)
      throw new CursorError(this.range, `more than ${MAX_PAGES_PER_RANGE} pages in one range`);
    for (const b of page.bills) {
      if (b.cTimeMs < this.range.fromMs || b.cTimeMs > this.range.toMs) {
        throw new CursorError(
          this.range,
          `bill ${b.billId} of ${new Date(b.cTimeMs).toISOString()} lies outside the range asked`,
        );
      }
    }
    for (const r of page.rejected) {
      if (r.cTimeMs !== undefined && (r.cTimeMs < this.range.fromMs || r.cTimeMs > this.range.toMs)) {
        throw new CursorError(
          this.range,
          `an item of ${new Date(r.cTimeMs).toISOString()} lies outside the range asked`,
        );
      }
    }
    if (page.hasNextPage && page.nextKey) this.step(page.nextKey);
  }

  private step(key: IncomeCursor): void {
    const id = `${key.nextKeyTime}/${key.nextKeyId}`;
    if (this.seen.has(id)) throw new CursorError(this.range, `the cursor ${id} came back a second time`);
    this.seen.add(id);
    if (this.last) {
      const order = compare(key, this.last);
      if (this.direction === undefined) this.direction = order;
      else if (order !== this.direction) {
        const was = `${this.last.nextKeyTime}/${this.last.nextKeyId}`;
        throw new CursorError(this.range, `the cursor went back from ${was} to ${id} (it moved the other way before)`);
      }
    }
    this.last = key;
  }
}

/** (time, id) order of two distinct cursors: 1 when `a` is later, -1 when earlier. */
function compare(a: IncomeCursor, b: IncomeCursor): 1 | -1 {
  const ta = BigInt(a.nextKeyTime);
  const tb = BigInt(b.nextKeyTime);
  if (ta !== tb) return ta > tb ? 1 : -1;
  return BigInt(a.nextKeyId) > BigInt(b.nextKeyId) ? 1 : -1;
}
