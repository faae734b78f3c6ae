// Chooses how wide the next time window is. Aim: pages about 70% full, so that most windows are
// proven complete by one request (a page below the limit) while using the budget well.

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

  constructor(private readonly opts: WindowSizerOptions) {
    this.width = clamp(opts.initialMs, 1, opts.maxMs);
    this.target = opts.limit * (opts.targetFill ?? 0.7);
  }

  get widthMs(): number {
    return this.width;
  }

  /**
   * The page of a window `windowMs` wide was full: halve that window (never below 1 ms). Relative
   * to the window actually asked for, which may be narrower than the width (clipped at the end).
   */
  shrink(windowMs: number): void {
    this.width = Math.max(1, Math.floor(Math.min(this.width, windowMs) / 2));
  }

  /** A window of `widthMs` held `count` bills: size the next one to the observed density. */
  observe(count: number, widthMs: number): void {
    const estimate = count === 0 ? widthMs * 2 : (widthMs * this.target) / count;
    // Grow at most 2x per step (density changes), shrink at most 4x (one busy window is not a trend).
    this.width = clamp(Math.floor(clamp(estimate, widthMs / 4, widthMs * 2)), 1, this.opts.maxMs);
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
