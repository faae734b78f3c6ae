// The ingest and rollups benches at CI size (bench/ingest-vs-copy.ts, bench/rollups.ts): the
// sandbox's history backfilled, COPY's reference loaded into a partitioned copy of bill_rows, and the
// rollups' ingest pairs with bill_rows' rollup triggers off and on. Both broke once, silently, when
// the bills moved under a view; a small run proves they still run on the storage as it is.
import { describe, expect, it } from "vitest";
import { ingestVsCopy } from "../../bench/ingest-vs-copy.ts";
import { rollupsBench } from "../../bench/rollups.ts";

describe("ingest and rollups benches at CI size", () => {
  it("ingest: backfills the history, and COPY loads the very rows into a partitioned copy", async () => {
    const r = await ingestVsCopy({ bills: 3_000, upsertRows: 100 });
    expect(r.bills).toBe(3_000);
    expect(r.copyRows).toBe(3_000);
    expect(r.upsertRows).toBe(100);
    expect(r.ratios).toHaveLength(3);
    for (const ratio of r.ratios) expect(ratio).toBeGreaterThan(0);
  }, 240_000);

  it("rollups: the views against their old text, and the ingest with the rollup triggers off and on", async () => {
    const r = await rollupsBench({ bills: [5_000], ingestBills: 2_000 });
    expect(r.sizes[0]!.rollupRows).toBeGreaterThan(0);
    expect(r.sizes[0]!.queries.length).toBeGreaterThan(0);
    for (const q of r.sizes[0]!.queries) expect(q.rows).toBeGreaterThan(0);
    expect(r.ingest.with.ratios.length).toBeGreaterThan(0);
    expect(r.ingest.without.ratios.length).toBe(r.ingest.with.ratios.length);
  }, 240_000);
});
