// Scripting the account state: mutateAccount changes exactly what the test changed (and the
// version / account updated_time as documented), evolveAccount moves a manual sandbox one seeded
// step, and long evolutions keep the records consistent.
import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox, type SandboxAccountState } from "../../src/sandbox/index.ts";
import { ACCOUNT, call, FIXED_END, FIXED_START } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({
    seed: 11,
    billCount: 3000,
    startMs: FIXED_START,
    endMs: FIXED_END,
    limits: null,
    accountEvolution: "manual",
  });
});
afterAll(() => sb.close());

/** Paths whose values differ between two states ("account.fees.0.taker_fee_rate"). */
function diff(a: unknown, b: unknown, path = ""): string[] {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b) ? [] : [path];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) =>
    diff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k),
  );
}

describe("mutateAccount", () => {
  it("changes exactly the account field changed, bumps version and updated_time, for every coin id", () => {
    const before2 = sb.accountState("2");
    const before1 = sb.accountState("1");
    const after = sb.mutateAccount("2", (s) => {
      (s.account.fees[0] as { taker_fee_rate: string }).taker_fee_rate = "0.00061";
    });
    expect(diff(before2, after).sort()).toEqual(["account.fees.0.taker_fee_rate", "account.updated_time", "version"]);
    expect(after.account.fees[0]?.taker_fee_rate).toBe("0.00061");
    expect(BigInt(after.version)).toBe(BigInt(before2.version) + 1n);
    expect(Number(after.account.updated_time)).toBeGreaterThan(Number(before2.account.updated_time));
    expect(sb.accountState("2")).toEqual(after); // stable until the next change
    // The account part is shared: coin 1 serves it too, with its own version bumped.
    const now1 = sb.accountState("1");
    expect(now1.account).toEqual(after.account);
    expect(diff(before1, now1).sort()).toEqual(["account.fees.0.taker_fee_rate", "account.updated_time", "version"]);
  });

  it("changes a position without touching the account part or other coin ids", () => {
    const before = sb.accountState("2");
    const other = sb.accountState("1");
    const after = sb.mutateAccount("2", (s) => {
      const p = s.positions[0];
      if (p) p.size = "123.456000";
    });
    expect(diff(before, after).sort()).toEqual(["positions.0.size", "version"]);
    expect(after.positions[0]?.size).toBe("123.456000"); // exactly the digits given
    expect(sb.accountState("1")).toEqual(other);
  });

  it("can add and remove records, set default_fee_setting and the version; a no-op changes nothing", async () => {
    const before = sb.accountState("2");
    expect(sb.mutateAccount("2", () => undefined)).toEqual(before);
    const added = sb.mutateAccount("2", (s) => {
      const p = structuredClone(s.positions[0] as SandboxAccountState["positions"][number]);
      p.id = "18446744073709551617"; // 2^64 + 1
      p.updated_match_sequence_id = "99999999999999999999";
      s.positions.push(p);
      s.account.default_fee_setting = {
        ...(s.account.fees[0] as SandboxAccountState["account"]["fees"][number]),
        contract_id: "0",
      };
      s.version = "1000";
    });
    expect(added.version).toBe("1000");
    expect(added.positions.at(-1)?.id).toBe("18446744073709551617");
    const r = await call(sb, { method: "GET", path: ACCOUNT, query: "coinId=2" });
    expect(r.text).toContain(`"version":"1000"`);
    expect(r.text).toContain(`"id":"18446744073709551617"`);
    expect(r.text).toContain(`"99999999999999999999"`);
    const removed = sb.mutateAccount("2", (s) => void s.positions.pop());
    expect(removed.version).toBe("1001");
    expect(removed.positions).toEqual(before.positions);
  });

  it("rejects malformed changes and leaves the state untouched", () => {
    const before = sb.accountState("2");
    const bad: ((s: SandboxAccountState) => void)[] = [
      (s) => void ((s.positions[0] as { size: string }).size = "1e5"),
      (s) => void ((s.collateral[0] as { coin_id: string }).coin_id = "two"),
      (s) => void ((s.account as unknown as Record<string, unknown>).surprise = 1),
      (s) =>
        void s.account.fees.push(structuredClone(s.account.fees[0] as SandboxAccountState["account"]["fees"][number])),
      (s) => void (s.version = "v2"),
    ];
    for (const change of bad) expect(() => sb.mutateAccount("2", change)).toThrow(/account state/);
    expect(sb.accountState("2")).toEqual(before);
  });
});

describe("evolveAccount", () => {
  it("moves a manual sandbox one step at a time, and a served response follows", async () => {
    const before = sb.accountState("2");
    let after = sb.evolveAccount("2");
    for (let i = 0; i < 20 && diff(before, after).length === 0; i++) after = sb.evolveAccount("2");
    expect(BigInt(after.version)).toBeGreaterThan(BigInt(before.version));
    const r = await call(sb, { method: "GET", path: ACCOUNT, query: "coinId=2" });
    expect(r.text).toContain(`"version":"${after.version}"`);
    expect(sb.accountState("2")).toEqual(after);
    expect(sb.evolveAccount("7")).toEqual(sb.accountState("7")); // nothing to evolve for an unknown coin
  });

  it("keeps records consistent over 300 steps", async () => {
    const s = await startSandbox({
      seed: 12,
      billCount: 1000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      limits: null,
      accountEvolution: "manual",
    });
    try {
      const ids = new Set<string>();
      let lastSeq = 0n;
      let liquidating = 0;
      let defaultSet = false;
      for (let i = 0; i < 300; i++) {
        const st = s.evolveAccount(i % 3 === 0 ? "1" : "2");
        if (st.collateral[0]?.is_liquidating) liquidating++;
        if (defaultSet) expect(st.account.default_fee_setting).not.toBeNull();
        defaultSet ||= st.account.default_fee_setting !== null;
        for (const p of st.positions) {
          ids.add(p.id);
          expect(BigInt(p.id)).toBeGreaterThan(2n ** 53n);
          const d = (f: string) => new Decimal(f);
          expect(d(p.cum_open_size).minus(d(p.cum_close_size)).equals(d(p.size)), p.id).toBe(true);
          expect(d(p.size).gt(0)).toBe(true);
          expect(BigInt(p.updated_match_sequence_id)).toBeGreaterThanOrEqual(BigInt(p.created_match_sequence_id));
          expect(Number(p.updated_time)).toBeGreaterThanOrEqual(Number(p.created_time));
          if (BigInt(p.updated_match_sequence_id) > lastSeq) lastSeq = BigInt(p.updated_match_sequence_id);
        }
        const sides = st.positions.map((p) => `${p.contract_id}/${p.side}`);
        expect(new Set(sides).size).toBe(sides.length); // HEDGE: one position per contract and side
      }
      expect(ids.size).toBeGreaterThan(10);
      expect(lastSeq).toBeGreaterThan(2n ** 63n + 1000n);
      expect(liquidating).toBeGreaterThan(0);
      expect(defaultSet).toBe(true);
    } finally {
      await s.close();
    }
  });
});
