// hasNextPage that lies (issue 14): `true` on pages the exchange did not fill. Unit: the rule that
// proves it, and that honest exchanges (full pages, or pages cut at a cap) never trip it. Against
// the sandbox over HTTP with `hasNext: "always"`: before, every page looked full, windows narrowed
// to 1 ms and were split by type, and nothing was ever stored (4,800 requests until killed);
// now the copy is exact, at the request count of an honest exchange, and the run says so.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BillsPage } from "../../../src/exchange/bills-endpoint.ts";
import { startSandbox, type Ordering } from "../../../src/sandbox/index.ts";
import { NO_FACTS } from "../../../src/store/exchange-profiles.ts";
import { PageTrust, type LyingHasNextPage } from "../../../src/streams/bills-core/page-trust.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { asRows, storedBills, syncFromSandbox } from "../../support/sandbox-sync.ts";

const page = (itemCount: number, hasNextPage: boolean | undefined): BillsPage => ({
  itemCount,
  hasNextPage,
  bills: [],
  rejected: [],
  unknownBusinessTypes: [],
});

function trustAfter(pages: BillsPage[]): { trust: PageTrust; lies: LyingHasNextPage[] } {
  const lies: LyingHasNextPage[] = [];
  const trust = new PageTrust(100, NO_FACTS, (e) => lies.push(e));
  for (const p of pages) trust.observe(p);
  return { trust, lies };
}

describe("PageTrust", () => {
  it("an honest exchange never trips it: full pages say true, others false", () => {
    const { trust, lies } = trustAfter([
      page(100, true),
      page(40, false),
      page(100, true),
      page(0, false),
      page(7, false),
    ]);
    expect(lies).toEqual([]);
    expect(trust.isFull(page(60, true))).toBe(true);
    expect(trust.isFull(page(99, false))).toBe(false);
    expect(trust.facts()).toEqual({ pageSize: 100, pageSizeCapped: false, hasNextPage: "honest" });
  });

  it("nor does an honest exchange that caps its pages below the limit (true only on pages cut at the cap)", () => {
    const { trust, lies } = trustAfter([
      page(50, true),
      page(30, false),
      page(50, true),
      page(50, true),
      page(12, false),
    ]);
    expect(lies).toEqual([]);
    expect(trust.isFull(page(50, true))).toBe(true);
    expect(trust.facts()).toEqual({ pageSize: 50, pageSizeCapped: true, hasNextPage: "honest" });
  });

  it("true on a page smaller than one already served proves the field lies: told once, and pages are full by count only", () => {
    const { trust, lies } = trustAfter([page(37, true), page(12, true), page(3, true), page(0, true)]);
    expect(lies).toEqual([{ itemCount: 12, largestBefore: 37 }]);
    expect(trust.hasNextPageDistrusted).toBe(true);
    expect(trust.isFull(page(36, true))).toBe(false);
    expect(trust.isFull(page(37, true))).toBe(true);
    expect(trust.facts().hasNextPage).toBe("distrusted");
  });

  it("a page as large as the largest served may have been cut (the exchange may cap pages, hasNextPage left out); a smaller one may not", () => {
    const { trust } = trustAfter([page(30, undefined), page(50, undefined), page(12, undefined)]);
    expect(trust.pageSize).toBe(50);
    expect(trust.isFull(page(50, undefined))).toBe(true);
    expect(trust.isFull(page(49, undefined))).toBe(false);
    expect(trust.isFull(page(0, undefined))).toBe(false);
    expect(trust.pageSizeSettled).toBe(false);
    trust.markCapped();
    expect(trust.facts()).toEqual({ pageSize: 50, pageSizeCapped: true, hasNextPage: "absent" });
    expect(trust.pageSizeSettled).toBe(true);
  });

  it("a cap said by hasNextPage is dropped when the field is proven to lie, and any cap when a larger page comes", () => {
    const { trust } = trustAfter([page(37, true)]);
    expect(trust.facts().pageSizeCapped).toBe(true);
    trust.observe(page(5, true));
    expect(trust.facts()).toMatchObject({ pageSizeCapped: false, hasNextPage: "distrusted" });
    const proven = trustAfter([page(40, undefined)]).trust;
    proven.markCapped();
    proven.observe(page(60, undefined));
    expect(proven.facts()).toMatchObject({ pageSize: 60, pageSizeCapped: false });
  });

  it("starts from what earlier runs learnt", () => {
    const trust = new PageTrust(
      100,
      { ...NO_FACTS, pageSize: 40, pageSizeCapped: true, hasNextPage: "distrusted" },
      () => undefined,
    );
    expect(trust.isFull(page(40, false))).toBe(true);
    expect(trust.isFull(page(39, true))).toBe(false);
    expect(trust.pageSizeSettled).toBe(true);
  });

  it("true on an empty page proves it at once", () => {
    const { lies } = trustAfter([page(0, true)]);
    expect(lies).toEqual([{ itemCount: 0, largestBefore: 0 }]);
  });
});

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

describe("bills sync against an exchange whose hasNextPage is true on every page", () => {
  it.each(["desc", "asc", "newest-shuffled"] as Ordering[])(
    "copies the history exactly (%s), at about an honest exchange's request count, and reports the field distrusted",
    async (ordering) => {
      const options = { seed: 31, billCount: 3000, bursts: 2, ordering, limits: null };
      const lying = await startSandbox({ ...options, hasNext: "always" });
      const honest = await startSandbox(options);
      try {
        const lied = await syncFromSandbox(t.db, lying, `lies_${ordering}`);
        expect(await storedBills(t.db, `lies_${ordering}`)).toEqual(asRows(lying.truth()));
        expect(lied.hasNextPageDistrusted).toBe(true);

        const straight = await syncFromSandbox(t.db, honest, `honest_${ordering}`);
        expect(straight.hasNextPageDistrusted).toBe(false);
        // The bursts are no less proven than on the honest exchange.
        expect(lied.unverifiedMilliseconds).toEqual(straight.unverifiedMilliseconds);
        process.stdout.write(`hasNext always (${ordering}): ${lied.requests} requests; honest: ${straight.requests}\n`);
        expect(lied.requests).toBeLessThanOrEqual(Math.ceil(straight.requests * 1.5));
      } finally {
        await lying.close();
        await honest.close();
      }
    },
  );
});
