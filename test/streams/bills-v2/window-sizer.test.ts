// The window sizer's decisions, one at a time (pager-efficiency.test.ts measures their sum).
import { describe, expect, it } from "vitest";
import { TARGET_FILL, WindowSizer } from "../../../src/streams/bills-v2/window-sizer.ts";

const sizer = (initialMs: number) => new WindowSizer({ limit: 100, initialMs, maxMs: 1e9 });
const target = 100 * TARGET_FILL;

describe("window sizer", () => {
  it("sizes to the density at the target fill, pooled over the last windows", () => {
    const s = sizer(1000);
    s.observe(target / 2, 1000); // half the target in 1000 ms: twice as wide
    expect(s.widthMs).toBe(2000);
    // Counts scattered around the target: the pooled estimate moves less than any one window's.
    s.observe(target * 1.2, 2000);
    const afterHigh = s.widthMs;
    expect(afterHigh).toBeGreaterThan(2000 / 1.2); // a one-window estimate would be 1666
    s.observe(target * 0.8, afterHigh);
    expect(Math.abs(s.widthMs - 2000) / 2000).toBeLessThan(0.1);
  });

  it("starts the pool afresh where the density plainly changes", () => {
    const s = sizer(2000);
    for (let i = 0; i < 5; i++) s.observe(target, 2000);
    s.observe(target / 4, 2000); // four times sparser
    expect(s.widthMs).toBe(4000); // the 2x growth step, not the pooled 2300
    s.observe(target / 2, 4000);
    expect(s.widthMs).toBe(8000);
  });

  it("seeded by a complete page over a span: starts at that density's width, without the 2x step", () => {
    const sparse = new WindowSizer({ limit: 100, initialMs: 3_600_000, maxMs: 7 * 86_400_000 });
    sparse.seed(3, 7 * 86_400_000);
    expect(sparse.widthMs).toBe(7 * 86_400_000); // 80 bills' worth would be wider than the widest
    const dense = new WindowSizer({ limit: 100, initialMs: 3_600_000, maxMs: 7 * 86_400_000 });
    dense.seed(90, 86_400_000);
    expect(dense.widthMs).toBe(Math.floor((86_400_000 * target) / 90));
    const empty = new WindowSizer({ limit: 100, initialMs: 3_600_000, maxMs: 7 * 86_400_000 });
    empty.seed(0, 86_400_000);
    expect(empty.widthMs).toBe(7 * 86_400_000);
  });

  it("grows at most 2x per window on sparse history, and shrinks at most 4x on one busy window", () => {
    const s = sizer(1000);
    s.observe(0, 1000);
    expect(s.widthMs).toBe(2000);
    s.observe(1, 2000);
    expect(s.widthMs).toBe(4000);
    const busy = sizer(1000);
    busy.observe(target * 10, 1000);
    expect(busy.widthMs).toBe(250);
  });

  it("newest first: narrows to hold the target (unseen bills estimated before the oldest served), then goes back to the page's density at once", () => {
    const s = sizer(10_000);
    // Window [0, 9999]; a full page, newest first, a bill every 95 ms from 9999 down to 594.
    const served = Array.from({ length: 100 }, (_, i) => 9999 - 95 * i);
    s.shrink(0, 10_000, served);
    // ~6 unseen before 594 (at the page's density) + 74 served = 80: cut at the 75th served bill from the oldest.
    expect(s.widthMs).toBe(9999 - 95 * 25);
    s.observe(80, s.widthMs);
    // The page's density (100 bills in 9406 ms) and this window's, pooled: ~0.8 × 9406.
    expect(s.widthMs).toBeGreaterThan(7000);
    expect(s.widthMs).toBeLessThan(8000);
  });

  it("newest first, with the unseen part alone over the target: narrows within it", () => {
    const s = sizer(10_000);
    const served = Array.from({ length: 100 }, (_, i) => 9999 - i); // the last 100 ms hold a page
    s.shrink(0, 10_000, served);
    // Unseen estimated at 9900 × 100/100 bills: the target needs 80 ms at that density.
    expect(s.widthMs).toBe(80);
  });

  it("oldest first: cuts just before the served bill at the target", () => {
    const s = sizer(10_000);
    const served = Array.from({ length: 100 }, (_, i) => 50 * i);
    s.shrink(0, 10_000, served);
    expect(s.widthMs).toBe(50 * (target - 1));
  });

  it("no usable order: halves; and never keeps more than 7/8 of the window, so narrowing converges", () => {
    const s = sizer(10_000);
    const shuffled = Array.from({ length: 100 }, (_, i) => (i * 37) % 100);
    s.shrink(0, 10_000, shuffled);
    expect(s.widthMs).toBe(5000);
    // A newest-first page whose bills all sit at the window's very end claims the rest is nearly empty.
    const t = sizer(10_000);
    t.shrink(
      0,
      1000,
      Array.from({ length: 100 }, () => 999),
    );
    expect(t.widthMs).toBeLessThanOrEqual(875);
  });

  it("after a one-millisecond window (a burst narrowed down to), goes back to the surrounding width", () => {
    const s = sizer(2000);
    s.observe(target, 2000);
    s.shrink(5000, 2000, []);
    s.observe(150, 1);
    expect(s.widthMs).toBeGreaterThan(1000);
  });

  it("regrows after a burst whose full page was a few milliseconds wide (the surrounding width is then 1 ms), instead of staying at 1 ms", () => {
    const s = sizer(2000);
    // A full page, no usable order, over 2 ms: the density says 1 ms holds the target.
    s.shrink(
      5000,
      2,
      Array.from({ length: 100 }, (_, i) => 5000 + (i % 2)),
    );
    expect(s.widthMs).toBe(1);
    s.observe(100, 1); // the burst's millisecond, split
    const widths: number[] = [];
    for (let i = 0; i < 12; i++) {
      s.observe(0, s.widthMs); // empty milliseconds after it
      widths.push(s.widthMs);
    }
    expect(widths.at(-1)).toBeGreaterThan(1000);
  });
});
