// Learning the page size before the first window, when it is not known yet: one query over the
// whole range (as wide as the exchange allows). It serves as many bills as the exchange puts on a
// page, up to `limit`, unless the range holds fewer. So a page of `limit` settles it, and a smaller
// page of n is a lower bound (bills-core/page-trust.ts counts pages of n as full). When the windows
// of the run later prove more than n bills in the probe's range, the probe's page was cut: the
// exchange caps pages at n (CapProof), which status then reports.
import type { BillsQuery } from "../../exchange/bills-endpoint.ts";
import type { ExchangeProfile } from "../bills-core/exchange-profile.ts";
import { PADDED, rangeQuery } from "./exact-bounds.ts";
import { WindowTooWide } from "./window-too-wide.ts";

export class CapProof {
  /**
   * Distinct bills of complete windows inside the probe's range (a padded window repeats its
   * neighbours' edge bills).
   */
  private readonly proven = new Set<string>();

  constructor(
    private readonly fromMs: number,
    private readonly toMs: number,
    /** Items the probe's page held. */
    private readonly served: number,
    private readonly profile: ExchangeProfile,
  ) {}

  /** A window [fromMs, toMs] was proven complete, holding `billIds`. */
  windowComplete(fromMs: number, toMs: number, billIds: Iterable<string>): void {
    if (fromMs < this.fromMs || toMs > this.toMs || this.proven.size > this.served) return;
    for (const id of billIds) this.proven.add(id);
    if (this.proven.size > this.served && this.served === this.profile.trust.pageSize) this.profile.trust.markCapped();
  }
}

/**
 * Probes [fromMs, toMs] when the page size is not settled; returns what can later prove a cap.
 * Not when the whole range is one first window (`firstWindowMs`: an account's incremental run at
 * steady state, learnt page size or not): the probe would ask for that very range, so the window's
 * own page teaches what the probe would, and a full page is narrowed and split like any other. A
 * quiet account, and one that has never had a bill, costs one request per run instead of two.
 */
export async function probePageSize(
  profile: ExchangeProfile,
  fetchPage: (q: BillsQuery) => Promise<{ itemCount: number }>,
  fromMs: number,
  toMs: number,
  firstWindowMs = 0,
  onDensity?: (count: number, widthMs: number) => void,
): Promise<CapProof | undefined> {
  if (profile.trust.pageSizeSettled || fromMs > toMs) return undefined;
  if (toMs - fromMs + 1 <= firstWindowMs) return undefined;
  for (;;) {
    const from = Math.max(fromMs, toMs - profile.limits.maxWindowMs() + 1);
    try {
      const page = await fetchPage(rangeQuery(from, toMs, PADDED, profile.limit));
      // The span holds at least the page's bills (all of them, unless the page was cut): at most
      // the width that density gives is what the run's first windows start at. A sparse account's
      // history goes in a few wide windows instead of dozens grown 2x at a time from an hour; had
      // the page been cut, the first windows come back full and are narrowed like any other.
      onDensity?.(page.itemCount, toMs - from + 1);
      return page.itemCount < profile.limit ? new CapProof(from, toMs, page.itemCount, profile) : undefined;
    } catch (err) {
      // The span was learnt from the refusal: ask again within it.
      if (!(err instanceof WindowTooWide)) throw err;
    }
  }
}

/**
 * The distinct bills of the run's latest complete windows, as far back as holds more than a page:
 * a range known to hold more bills than the largest page served, which decidePageSize asks.
 */
export class RecentBills {
  private windows: { fromMs: number; ids: Set<string> }[] = [];

  constructor(private readonly keep: number) {}

  add(fromMs: number, billIds: Iterable<string>): void {
    this.windows.push({ fromMs, ids: new Set(billIds) });
    let total = 0;
    for (let i = this.windows.length - 1; i >= 0; i--) {
      total += this.windows[i]!.ids.size;
      if (total > this.keep) {
        this.windows = this.windows.slice(i);
        return;
      }
    }
  }

  /** The latest start from which the windows up to now hold more than `n` distinct bills. */
  startHolding(n: number, extra: Iterable<string>): number | undefined {
    const ids = new Set(extra);
    for (let i = this.windows.length - 1; i >= 0; i--) {
      for (const id of this.windows[i]!.ids) ids.add(id);
      if (ids.size > n) return this.windows[i]!.fromMs;
    }
    return undefined;
  }
}

/**
 * A single millisecond came back with as many bills as the largest page served, below `limit`:
 * cut by a cap, or complete? Ask a range known to hold more bills than that (the latest windows
 * and this millisecond): a larger page shows the page size is larger (the millisecond was
 * complete), a page of the same size proves a cap. Without such a range, nothing is settled.
 */
export async function decidePageSize(
  profile: ExchangeProfile,
  fetchPage: (q: BillsQuery) => Promise<unknown>,
  ms: number,
  recent: RecentBills,
  msBillIds: Iterable<string>,
): Promise<void> {
  const size = profile.trust.pageSize;
  if (profile.trust.pageSizeSettled) return;
  const from = recent.startHolding(size, msBillIds);
  if (from === undefined || ms - from + 1 > profile.limits.maxWindowMs()) return;
  try {
    await fetchPage(rangeQuery(from, ms, PADDED, profile.limit));
  } catch (err) {
    if (!(err instanceof WindowTooWide)) throw err;
    return;
  }
  if (profile.trust.pageSize === size) profile.trust.markCapped();
}
