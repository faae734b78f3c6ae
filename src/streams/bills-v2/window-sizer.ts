// Chooses how wide the next time window is. Aim: pages about 80% full, so that most windows are
// proven complete by one request (a page below the limit) while using the budget well.
//
// The number of bills in a window of a given width is random even where the density is steady
// (trades come in clumps), so no width gives full-but-not-over pages every time: a page that comes
// back full is a request spent for nothing, one well under the limit a request that carried little.
// 80% is where the two costs meet on the sandbox's history (docs/design/window-sizing.md).
// The density itself is pooled over the last few windows, which halves the noise of a one-window
// estimate, and the pool starts afresh where the density plainly changed.

/** Fraction of a page windows aim for (WindowSizerOptions.targetFill's default). */
export const TARGET_FILL = 0.8;

/** Pages' worth of bills (at the limit) the density estimate pools, newest windows first. */
const POOL_PAGES = 3;

/**
 * The width that holds `limit × fill` bills where `widthMs` held `count` (Infinity for none): the
 * sizer's estimate from observed windows, and a backfill window's first width from the span stored
 * before it.
 */
export function widthForDensity(count: number, widthMs: number, limit: number, fill = TARGET_FILL): number {
  return count === 0 ? Infinity : (widthMs * limit * fill) / count;
}

export interface WindowSizerOptions {
  limit: number;
  initialMs: number;
  maxMs: number;
  /** Fraction of a page to aim for. */
  targetFill?: number;
}

interface Sample {
  count: number;
  widthMs: number;
}

export class WindowSizer {
  private width: number;
  /** Bills a full page holds (the limit until the exchange shows a smaller page size). */
  private pageSize: number;
  /** Widest window the exchange accepts. */
  private maxMs: number;
  private target: number;
  /** The width the density chose last (bursts and narrowed leftovers aside). */
  private densityWidth: number | undefined;
  /** Recent windows, oldest first: what the density estimate pools. */
  private pool: Sample[] = [];

  constructor(private readonly opts: WindowSizerOptions) {
    this.pageSize = opts.limit;
    this.maxMs = opts.maxMs;
    this.width = clamp(opts.initialMs, 1, opts.maxMs);
    this.target = opts.limit * (opts.targetFill ?? TARGET_FILL);
  }

  /**
   * The exchange serves at most `n` bills a page (bills-core/page-trust.ts): windows aim at a fill
   * of that.
   */
  setPageSize(n: number): void {
    if (n === this.pageSize || n < 1) return;
    this.pageSize = n;
    this.target = n * (this.opts.targetFill ?? TARGET_FILL);
  }

  /** The exchange accepts windows of at most `ms` (bills-core/range-limits.ts). */
  limitWidth(ms: number): void {
    if (ms >= this.maxMs) return;
    this.maxMs = Math.max(1, ms);
    this.width = Math.min(this.width, this.maxMs);
    if (this.densityWidth !== undefined) this.densityWidth = Math.min(this.densityWidth, this.maxMs);
  }

  get widthMs(): number {
    return this.width;
  }

  /**
   * The page of the window starting at `fromMs`, `windowMs` wide, was full: narrow the window.
   * `billTimes` are in page order, which hints at which part of the window the exchange served:
   * - newest first (descending): the page is every bill after its oldest one, and the unseen bills
   *   lie before it. The narrowed window reaches from the start as far as holds the target: the
   *   unseen ones (estimated at the page's density) and the served ones up to where the count is
   *   reached. A burst at the window's start is isolated in two steps instead of ~20 halvings.
   * - oldest first (ascending): the page is every bill up to its newest one: cut just before the
   *   bill at the target.
   * - no order: halve.
   * The page's density then replaces the pooled one (it is the newest and plainly differs), and the
   * windows after the narrowed one may grow straight back to it: the narrowed window is a leftover
   * of a miss, and regrowing 2x per step from its width would spend several half-empty requests.
   * This only sizes windows. Completeness is still proven by a page that is not full, so a wrong
   * hint costs a request, never a bill.
   */
  shrink(fromMs: number, windowMs: number, billTimes: number[] = []): void {
    const n = billTimes.length;
    const enough = n >= Math.ceil(this.target);
    let width = Math.floor(Math.min(this.width, windowMs) / 2);
    // No order: at least n bills in the window, so at least this density.
    let sample: Sample = { count: n, widthMs: windowMs };
    if (enough && isSorted(billTimes, (a, b) => a >= b)) {
      const oldest = billTimes.at(-1)!;
      sample = { count: n, widthMs: fromMs + windowMs - oldest };
      const unseen = ((oldest - fromMs) * n) / sample.widthMs;
      const served = Math.round(this.target - unseen); // served bills the narrowed window holds too
      width =
        served <= 0
          ? Math.floor(((oldest - fromMs) * this.target) / unseen) // the unseen ones alone are over the target
          : billTimes[n - 1 - Math.min(served, n - 1)]! - fromMs; // up to the first served bill left out
    } else if (enough && isSorted(billTimes, (a, b) => a <= b)) {
      sample = { count: n, widthMs: billTimes.at(-1)! - fromMs + 1 };
      width = Math.min(width, billTimes[Math.ceil(this.target) - 1]! - fromMs);
    }
    // At most 7/8 of the window, so that narrowing always converges (on a burst, to one ms) even
    // where a hint is wrong; a right one rarely keeps more (a page is the target plus a fifth).
    this.width = clamp(width, 1, Math.floor((windowMs * 7) / 8));
    if (n > 0) {
      this.pool = [sample];
      this.densityWidth = clamp(Math.floor(this.estimate()), 1, this.maxMs);
    }
  }

  /**
   * Before the first window: a span of `widthMs` is known to hold `count` bills, or more (the
   * page-size probe's page). The first windows start at the width that density gives, without the
   * 2x growth limit (nothing sized earlier is in flight yet).
   */
  seed(count: number, widthMs: number): void {
    this.add({ count, widthMs });
    this.width = clamp(Math.floor(this.estimate()), 1, this.maxMs);
    this.densityWidth = this.width;
  }

  /** A window of `widthMs` held `count` bills: size the next one to the observed density. */
  observe(count: number, widthMs: number): void {
    // A single millisecond (typically a burst, narrowed down to) says nothing about the density
    // around it: go back to the width the surrounding windows chose instead of regrowing from 1 ms.
    // Unless that width is 1 ms itself (a full page a few ms wide): then regrow from it, or every
    // window after would be 1 ms forever.
    if (widthMs === 1 && this.densityWidth !== undefined && this.densityWidth > 1) {
      this.width = this.densityWidth;
      return;
    }
    this.add({ count, widthMs });
    // Grow at most 2x per step (sparse history, where windows hold nothing, grows geometrically),
    // shrink at most 4x (one busy window is not a trend), both from the current width: with
    // several windows in flight, the window observed now was sized a few decisions ago, and growing
    // from its width would never get ahead of the lag. After a full page the current width is a
    // narrowed leftover: growth may then go as far as the page's density (densityWidth).
    const grow = Math.max(this.width * 2, this.densityWidth ?? 0);
    this.width = clamp(Math.floor(clamp(this.estimate(), this.width / 4, grow)), 1, this.maxMs);
    this.densityWidth = this.width;
  }

  /**
   * Adds a window to the pool. A window whose count is under half or over twice what the pool
   * predicts for it (where the prediction is large enough for that to be more than noise) starts
   * the pool afresh: the density changed, and old windows would only slow the estimate down.
   */
  private add(s: Sample): void {
    const { count, widthMs } = this.pooled();
    const predicted = widthMs === 0 ? 0 : (count * s.widthMs) / widthMs;
    if (predicted >= this.pageSize / 4 && (s.count < predicted / 2 || s.count > predicted * 2)) this.pool = [];
    this.pool.push(s);
    if (this.pool.length > 64) this.pool = this.pool.slice(-32);
  }

  /** The newest windows holding POOL_PAGES pages' worth of bills together (all, if fewer). */
  private pooled(): Sample {
    let count = 0;
    let widthMs = 0;
    for (let i = this.pool.length - 1; i >= 0 && count < POOL_PAGES * this.pageSize; i--) {
      count += this.pool[i]!.count;
      widthMs += this.pool[i]!.widthMs;
    }
    return { count, widthMs };
  }

  private estimate(): number {
    const { count, widthMs } = this.pooled();
    return widthForDensity(count, widthMs, this.pageSize, this.opts.targetFill);
  }
}

function isSorted(values: number[], inOrder: (a: number, b: number) => boolean): boolean {
  for (let i = 1; i < values.length; i++) if (!inOrder(values[i - 1]!, values[i]!)) return false;
  return true;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
