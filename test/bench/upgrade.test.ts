// The upgrade bench at CI size (bench/upgrade.ts): books written at the schema before bill_rows,
// every account-month closed, then `migrate` timed. A small run proves the bench still starts from
// the old schema and reaches the new one with every close re-checked.
import { describe, expect, it } from "vitest";
import { upgradeBench } from "../../bench/upgrade.ts";

describe("upgrade bench at CI size", () => {
  it("writes the books at the old schema, upgrades them, and measures both tables", async () => {
    const r = await upgradeBench({ bills: 6_000, accounts: 3, concurrency: 2 });
    expect(r.generated.billsWritten).toBe(6_000);
    expect(r.closes.count).toBe(36);
    expect(r.forms).toBeGreaterThan(0);
    expect(r.billRowsBytes).toBeGreaterThan(0);
    expect(r.billRowsBytes).toBeLessThan(r.legacyBytes);
    expect(r.phases.map((p) => p.name)).toContain("copy into bill_rows");
  }, 120_000);
});
