// Chooses how wide the next time window is. Aim: pages about 70% full, so that most windows are
// proven complete by one request (a page below the limit) while using the budget well.

/** Fraction of a page windows aim for (WindowSizerOptions.targetFill's default). */
export const TARGET_FILL = 0.7;

/**
 * The width that holds `limit × fill` bills where `widthMs` held `count` (Infinity for none): the
 * sizer's estimate from an observed window, and a backfill window's first width from the span
 * stored before it.
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

export class WindowSizer {
  private width: number;
  private readonly target: number;
  /** The width the last multi-millisecond window's density chose (bursts do not count). */
  private densityWidth: number | undefined;

  constructor(private readonly opts: WindowSizerOptions) {
    this.width = clamp(opts.initialMs, 1, opts.maxMs);
    this.target = opts.limit * (opts.targetFill ?? TARGET_FILL);
  }

  get widthMs(): number {
    return this.width;
  }

  /**
   * The page of the window starting at `fromMs`, `windowMs` wide, was full: narrow the window, to
   * half at most, and further where the page's own bills show more. `billTimes` are in page order,
   * which hints at which end of the window the exchange served:
   * - newest first (descending): the unseen bills lie before the oldest one served, so cut there;
   *   a burst at the window's start is then isolated in two steps instead of ~20 halvings;
   * - oldest first (ascending): cut just before the bill at the target fill;
   * - no order: halve.
   * This only sizes windows. Completeness is still proven by a page that is not full, so a wrong
   * hint costs a request, never a bill.
   */
  shrink(fromMs: number, windowMs: number, billTimes: number[] = []): void {
    let width = Math.floor(Math.min(this.width, windowMs) / 2);
    const k = Math.ceil(this.target);
    if (billTimes.length >= k && isSorted(billTimes, (a, b) => a >= b)) {
      width = Math.min(width, billTimes.at(-1)! - fromMs);
    } else if (billTimes.length >= k && isSorted(billTimes, (a, b) => a <= b)) {
      width = Math.min(width, billTimes[k - 1]! - fromMs);
    }
    this.width = Math.max(1, width);
  }

  /** A window of `widthMs` held `count` bills: size the next one to the observed density. */
  observe(count: number, widthMs: number): void {
    // A single millisecond (typically a burst, narrowed down to) says nothing about the density
    // around it: go back to the width the surrounding windows chose instead of regrowing from 1 ms.
    if (widthMs === 1 && this.densityWidth !== undefined) {
      this.width = this.densityWidth;
      return;
    }
    // Grow at most 2x per step (density changes), shrink at most 4x (one busy window is not a trend),
    // both from the current width: with several windows in flight, the window observed now was
    // sized a few decisions ago, and growing from its width would never get ahead of the lag.
    const estimate = widthForDensity(count, widthMs, this.opts.limit, this.opts.targetFill);
    this.width = clamp(Math.floor(clamp(estimate, this.width / 4, this.width * 2)), 1, this.opts.maxMs);
    this.densityWidth = this.width;
  }
}

function isSorted(values: number[], inOrder: (a: number, b: number) => boolean): boolean {
  for (let i = 1; i < values.length; i++) if (!inOrder(values[i - 1]!, values[i]!)) return false;
  return true;
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
