import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planBackfill } from "../../src/jobs/backfill-plan.ts";

describe("backfill plan", () => {
  it("covers the range exactly, without gaps or overlaps, with deterministic ids (property)", () => {
    fc.assert(
      // At most ~2,000 windows per case: the plan is materialised in memory.
      fc.property(
        fc.integer({ min: 1, max: 2e12 }),
        fc.integer({ min: 0, max: 1e9 }),
        fc.integer({ min: 1, max: 2000 }),
        (from, len, windows) => {
          const windowMs = Math.max(1, Math.ceil((len + 1) / windows));
          const plan = planBackfill("acct", from, from + len, windowMs);
          expect(plan[0]!.data.fromMs).toBe(from);
          expect(plan.at(-1)!.data.toMs).toBe(from + len);
          for (let i = 1; i < plan.length; i++) expect(plan[i]!.data.fromMs).toBe(plan[i - 1]!.data.toMs + 1);
          // Each window names its neighbours: the one it waits for and the one it starts when done.
          const wrongLinks = plan.filter((w, i) => {
            const [p, n] = [plan[i - 1]?.data, plan[i + 1]?.data];
            const linked = (link: { fromMs: number; toMs: number } | undefined, to: typeof p) =>
              to ? link?.fromMs === to.fromMs && link.toMs === to.toMs : link === undefined;
            return !linked(w.data.previous, p) || !linked(w.data.next, n);
          });
          expect(wrongLinks).toEqual([]);
          expect(new Set(plan.map((w) => w.jobId)).size).toBe(plan.length);
          expect(planBackfill("acct", from, from + len, windowMs)).toEqual(plan);
          for (const w of plan) expect(w.jobId).not.toContain(":");
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses an empty range", () => {
    expect(() => planBackfill("a", 10, 5)).toThrow(/before --from/);
  });
});
