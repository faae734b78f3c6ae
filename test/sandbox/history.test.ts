// The generated history itself, checked through truth(): determinism, counts, ids, times,
// the balance rule, the business mix, bursts and the unsplittable burst.
import { Decimal } from "decimal.js";
import { afterAll, describe, expect, it } from "vitest";
import { BUSINESS_TYPES, startSandbox, type Sandbox, type SandboxBill } from "../../src/sandbox/index.ts";
import { FIXED_END, FIXED_START } from "./helpers.ts";

const EIGHT_HOURS = 8 * 3600 * 1000;
const opened: Sandbox[] = [];
async function sandbox(o: Parameters<typeof startSandbox>[0] = {}): Promise<Sandbox> {
  const sb = await startSandbox({ startMs: FIXED_START, endMs: FIXED_END, limits: null, ...o });
  opened.push(sb);
  return sb;
}
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});

function byMs(bills: SandboxBill[]): Map<number, SandboxBill[]> {
  const m = new Map<number, SandboxBill[]>();
  for (const b of bills) {
    const g = m.get(b.cTimeMs);
    if (g) g.push(b);
    else m.set(b.cTimeMs, [b]);
  }
  return m;
}

function checkBalanceChain(bills: SandboxBill[]): void {
  const last = new Map<string, Decimal>();
  for (const b of bills) {
    const expected = (last.get(b.coin) ?? new Decimal(0)).plus(b.amount);
    expect(new Decimal(b.balance).eq(expected), `balance of bill ${b.billId}`).toBe(true);
    last.set(b.coin, new Decimal(b.balance));
  }
}

describe("generated history", () => {
  it("is deterministic for a seed and differs between seeds", async () => {
    const a = (await sandbox({ seed: 7, bursts: 1, unsplittableBurst: true })).truth();
    const b = (await sandbox({ seed: 7, bursts: 1, unsplittableBurst: true })).truth();
    const c = (await sandbox({ seed: 8, bursts: 1, unsplittableBurst: true })).truth();
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(c));
  });

  it("honours billCount, ids above 2^53 strictly increasing, times in range", async () => {
    for (const billCount of [1, 2, 1234, 5000]) {
      const bills = (await sandbox({ billCount, seed: billCount })).truth();
      expect(bills).toHaveLength(billCount);
      let prevId = 0n;
      let prevTime = -Infinity;
      for (const b of bills) {
        expect(b.billId).toMatch(/^\d+$/);
        const id = BigInt(b.billId);
        expect(id > 2n ** 53n).toBe(true);
        expect(id > prevId).toBe(true);
        expect(Number.isInteger(b.cTimeMs)).toBe(true);
        expect(b.cTimeMs).toBeGreaterThanOrEqual(Math.max(prevTime, FIXED_START));
        expect(b.cTimeMs).toBeLessThanOrEqual(FIXED_END);
        prevId = id;
        prevTime = b.cTimeMs;
      }
    }
  });

  it("keeps balance = previous balance of the coin + amount, starting from a deposit", async () => {
    const bills = (await sandbox({ seed: 3, billCount: 20_000, bursts: 2, unsplittableBurst: true })).truth();
    checkBalanceChain(bills);
    for (const coin of ["USDT", "USDC"]) expect(bills.find((b) => b.coin === coin)?.businessType).toBe("deposit");
  });

  it("has a realistic mix of coins, symbols, business types, scales and same-ms groups", async () => {
    const bills = (await sandbox({ seed: 11, billCount: 20_000 })).truth();
    const types = new Map<string, number>();
    for (const b of bills) types.set(b.businessType, (types.get(b.businessType) ?? 0) + 1);
    for (const t of types.keys()) expect(BUSINESS_TYPES).toContain(t);
    for (const t of [
      "position_open_long",
      "position_open_short",
      "position_close_long",
      "position_close_short",
      "position_funding",
      "deposit",
      "withdraw",
      "transfer_in",
      "transfer_out",
      "margin_move_in",
      "margin_move_out",
      "start_liquidate",
      "finish_liquidate",
    ]) {
      expect(types.get(t), t).toBeGreaterThan(0);
    }
    expect([...types.keys()].some((t) => t.startsWith("tracking_"))).toBe(true);
    const trades = bills.filter(
      (b) => b.businessType.startsWith("position_open") || b.businessType.startsWith("position_close"),
    );
    expect(trades.length / bills.length).toBeGreaterThan(0.5);
    for (const b of trades) expect(new Decimal(b.fillFee).isZero(), b.billId).toBe(false);
    const usdt = bills.filter((b) => b.coin === "USDT").length;
    expect(usdt / bills.length).toBeGreaterThan(0.6);
    expect(usdt).toBeLessThan(bills.length);
    const symbols = new Set(bills.map((b) => b.symbol).filter((s) => s !== ""));
    expect(symbols.size).toBeGreaterThanOrEqual(40);
    expect(symbols.size).toBeLessThanOrEqual(80);
    for (const b of bills) if (b.symbol !== "") expect(b.symbol.endsWith(b.coin.toLowerCase()), b.symbol).toBe(true);
    const scales = new Set(bills.map((b) => (b.amount.split(".")[1] ?? "").length));
    for (let s = 0; s <= 8; s++) expect(scales.has(s), `scale ${s}`).toBe(true);
    // Funding only at 8-hourly settlement instants, each instant one millisecond.
    for (const b of bills) if (b.businessType === "position_funding") expect(b.cTimeMs % EIGHT_HOURS).toBe(0);
    const groups = [...byMs(bills).values()];
    expect(
      groups.some((g) => g.length >= 2 && g.length <= 5 && g.every((b) => b.businessType !== "position_funding")),
    ).toBe(true);
    expect(Math.max(...groups.map((g) => g.length))).toBeLessThanOrEqual(100);
  });

  it("adds bursts of > 100 bills in one ms that filters can split", async () => {
    const bursts = 3;
    const billCount = 8000;
    for (const burstSize of [150, 400]) {
      const bills = (await sandbox({ seed: 5, billCount, bursts, burstSize })).truth();
      expect(bills).toHaveLength(billCount);
      const big = [...byMs(bills).entries()].filter(([, g]) => g.length > 100);
      expect(big).toHaveLength(bursts);
      for (const [ms, g] of big) {
        expect(g).toHaveLength(burstSize);
        expect(ms % EIGHT_HOURS).toBe(0);
        expect(new Set(g.map((b) => b.coin))).toEqual(new Set(["USDT", "USDC"]));
        const perPair = new Map<string, number>();
        const perCombo = new Map<string, number>();
        for (const b of g) {
          perPair.set(`${b.coin}|${b.symbol}`, (perPair.get(`${b.coin}|${b.symbol}`) ?? 0) + 1);
          const k = `${b.businessType}|${b.coin}|${b.symbol}`;
          perCombo.set(k, (perCombo.get(k) ?? 0) + 1);
        }
        for (const n of perPair.values()) expect(n).toBeLessThanOrEqual(2);
        for (const n of perCombo.values()) expect(n).toBeLessThanOrEqual(100);
        for (const pair of perPair.keys()) {
          expect(
            bills.some((b) => b.cTimeMs < ms && `${b.coin}|${b.symbol}` === pair),
            pair,
          ).toBe(true);
        }
      }
    }
  });

  it("adds one unsplittable millisecond of 150 identical businessType/coin/symbol bills", async () => {
    const bills = (await sandbox({ seed: 9, billCount: 3000, unsplittableBurst: true })).truth();
    expect(bills).toHaveLength(3000);
    const big = [...byMs(bills).values()].filter((g) => g.length > 100);
    expect(big).toHaveLength(1);
    const g = big[0] as SandboxBill[];
    expect(g.length).toBe(150);
    expect(new Set(g.map((b) => `${b.businessType}|${b.coin}|${b.symbol}`)).size).toBe(1);
    const ms = g[0]?.cTimeMs as number;
    expect(ms).toBeGreaterThan(FIXED_START + (FIXED_END - FIXED_START) / 4);
    expect(ms).toBeLessThan(FIXED_END - (FIXED_END - FIXED_START) / 4);
  });

  it("rejects impossible options", async () => {
    await expect(startSandbox({ billCount: 100, bursts: 1 })).rejects.toThrow(/too small/);
    await expect(startSandbox({ billCount: 10_000, bursts: 1, burstSize: 50 })).rejects.toThrow(/burstSize/);
    await expect(startSandbox({ billCount: -1 })).rejects.toThrow(/billCount/);
  });

  it("appendBill adds a late bill with the highest id, chained on the latest earlier bill of its coin", async () => {
    const sb = await sandbox({ seed: 4, billCount: 2000 });
    const before = sb.truth();
    const maxId = before.reduce((m, b) => (BigInt(b.billId) > m ? BigInt(b.billId) : m), 0n);
    const mid = before[1000] as SandboxBill;
    const late = sb.appendBill({
      cTimeMs: mid.cTimeMs,
      coin: "USDC",
      symbol: "cmt_ethusdc",
      businessType: "position_funding",
      amount: "-0.12345678",
    });
    expect(BigInt(late.billId) > maxId).toBe(true);
    const after = sb.truth();
    expect(after).toHaveLength(2001);
    const at = after.findIndex((b) => b.billId === late.billId);
    expect(after[at]).toEqual(late);
    // Sorted by (cTimeMs, billId): last within its millisecond.
    expect((after[at + 1]?.cTimeMs ?? Infinity) > late.cTimeMs).toBe(true);
    const prev = after
      .slice(0, at)
      .reverse()
      .find((b) => b.coin === "USDC") as SandboxBill;
    expect(new Decimal(late.balance).eq(new Decimal(prev.balance).plus("-0.12345678"))).toBe(true);
    const fresh = sb.appendBill();
    expect(BigInt(fresh.billId) > BigInt(late.billId)).toBe(true);
    expect(sb.truth().at(-1)).toEqual(fresh);
    expect(() => sb.appendBill({ businessType: "nope" })).toThrow(/businessType/);
    expect(() => sb.appendBill({ amount: "1e5" })).toThrow(/amount/);
  });
});
