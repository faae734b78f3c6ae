// Switch `nullSymbols`: the v2 bills endpoint sends "symbol": null for the bills of no contract
// (deposits, withdrawals, transfers), "" without the switch; v3 sends null either way; every other
// bill carries its symbol on both; a bad value is refused naming the option; the CLI flag sets it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { behavioursLine, sandboxOptionsFromFlags, type SandboxFlags } from "../../src/cli/commands/sandbox.ts";
import { startSandbox, type Sandbox, type SandboxOptions } from "../../src/sandbox/index.ts";
import { billsPage, call, FIXED_END, FIXED_START, idOf, INCOME, timeOf } from "./helpers.ts";

const NO_CONTRACT = new Set(["deposit", "withdraw", "transfer_in", "transfer_out"]);
const OPTIONS: SandboxOptions = { seed: 9, billCount: 300, startMs: FIXED_START, endMs: FIXED_END, limits: null };

let on: Sandbox;
let off: Sandbox;
beforeAll(async () => {
  on = await startSandbox({ ...OPTIONS, nullSymbols: true });
  off = await startSandbox(OPTIONS);
});
afterAll(async () => {
  await on?.close();
  await off?.close();
});

/** Every item of the history through the v2 bills endpoint, by bill id. */
async function v2Items(sb: Sandbox): Promise<Map<string, Record<string, unknown>>> {
  // Newest first; each next page ends at the oldest time seen (included: a millisecond may straddle pages).
  const items = new Map<string, Record<string, unknown>>();
  let endTime = FIXED_END;
  for (;;) {
    const page = await billsPage(sb, { startTime: FIXED_START, endTime, limit: 100 });
    const before = items.size;
    for (const i of page.items) items.set(idOf(i), i);
    if (!page.hasNextPage || items.size === before) return items;
    endTime = Math.min(...page.items.map(timeOf));
  }
}

async function v3Items(sb: Sandbox): Promise<Record<string, unknown>[]> {
  const body = JSON.stringify({ startTime: FIXED_START, endTime: FIXED_END, limit: 100 });
  const items: Record<string, unknown>[] = [];
  let cursor = "";
  for (;;) {
    const r = await call(sb, { path: INCOME, body: cursor ? `${body.slice(0, -1)},${cursor}}` : body });
    expect(r.status, r.text).toBe(200);
    const page = JSON.parse(r.text) as { items: Record<string, unknown>[]; nextKey: null | Record<string, unknown> };
    items.push(...page.items);
    if (page.nextKey === null) return items;
    // The cursor as sent (ids above 2^53 stay exact in the text).
    cursor = /"nextKey":\{([^}]*)\}/.exec(r.text)![1]!;
  }
}

describe("nullSymbols", () => {
  it('v2 sends symbol null for exactly the bills of no contract with the switch, and "" without it', async () => {
    const truth = on.truth();
    expect(off.truth()).toEqual(truth);
    const withNull = await v2Items(on);
    const without = await v2Items(off);
    expect(withNull.size).toBe(truth.length);
    expect(without.size).toBe(truth.length);
    let none = 0;
    for (const b of truth) {
      const noContract = NO_CONTRACT.has(b.businessType);
      expect(b.symbol === "", b.billId).toBe(noContract);
      if (noContract) none++;
      expect(withNull.get(b.billId)!.symbol, b.billId).toBe(noContract ? null : b.symbol);
      expect(without.get(b.billId)!.symbol, b.billId).toBe(b.symbol);
    }
    expect(none).toBeGreaterThan(5);
  });

  it("v3 sends symbol null for them with or without the switch", async () => {
    for (const sb of [on, off]) {
      const items = await v3Items(sb);
      expect(items.length).toBe(sb.truth().length);
      for (const item of items)
        expect(item.symbol === null, String(item.billId)).toBe(NO_CONTRACT.has(String(item.incomeType)));
    }
  });

  it("refuses a value that is not a boolean, naming the option", async () => {
    await expect(startSandbox({ ...OPTIONS, nullSymbols: "yes" as unknown as boolean })).rejects.toThrow(
      'sandbox: nullSymbols must be a boolean, got "yes"',
    );
  });

  it("is set by `ledger-sync sandbox --null-symbols` and named in its behaviours line", () => {
    const base: SandboxFlags = {
      host: "127.0.0.1",
      port: 0,
      seed: 1,
      bills: 100,
      ordering: "desc",
      bursts: 0,
      faults: 0,
      limits: true,
      hasNext: "honest",
    };
    expect(sandboxOptionsFromFlags(base)).not.toHaveProperty("nullSymbols");
    const o = sandboxOptionsFromFlags({ ...base, nullSymbols: true });
    expect(o.nullSymbols).toBe(true);
    expect(behavioursLine(o)).toBe("behaviours: v2 symbol null for bills of no contract");
  });
});
