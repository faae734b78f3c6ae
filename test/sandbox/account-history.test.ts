// The collateral record follows the bill history: amount = latest balance of the coin at or
// before now, cum_* = exact (decimal.js) sums of the bills by businessType, fill and liquidation
// fees from fillFee; it moves with appendBill (also late and future-dated bills) and stays cheap
// at 1,000,000 bills.
import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Sandbox, type SandboxBill } from "../../src/sandbox/index.ts";
import { ACCOUNT, call, FIXED_END, FIXED_START } from "./helpers.ts";

const COIN_IDS: Record<string, string> = { USDT: "2", USDC: "1" };

/** The test's own reading of the attribution rules (README "Account state"). */
function expected(truth: SandboxBill[], coin: string, nowMs = Date.now()) {
  const cum = new Map<string, Decimal>();
  const add = (f: string, v: string) => cum.set(f, (cum.get(f) ?? new Decimal(0)).plus(v));
  let liquidating: string | null = null;
  const bills = truth.filter((b) => b.coin === coin && b.cTimeMs <= nowMs);
  for (const b of bills) {
    const t = b.businessType;
    if (
      /^(deposit|withdraw|transfer_(in|out)|margin_move_(in|out)|position_(open|close)_(long|short)|position_funding|order_(fill|liquidate)_fee_income)$/.test(
        t,
      )
    ) {
      add(`cum_${t}_amount`, b.amount);
    }
    if (t === "start_liquidate") liquidating = b.symbol;
    if (t === "finish_liquidate") liquidating = null;
    if (t.startsWith("position_open")) add("cum_position_fill_fee_amount", b.fillFee);
    if (t.startsWith("position_close"))
      add(b.symbol === liquidating ? "cum_position_liquidate_fee_amount" : "cum_position_fill_fee_amount", b.fillFee);
  }
  return { cum, last: bills.at(-1), first: bills[0] };
}

function expectCollateral(sb: Sandbox, coin: string, truth: SandboxBill[]): void {
  const c = sb.accountState(COIN_IDS[coin] as string).collateral[0];
  if (c === undefined) throw new Error("no collateral");
  const { cum, last, first } = expected(truth, coin);
  expect(c.amount, `${coin} amount`).toBe(last?.balance ?? "0");
  for (const [field, value] of Object.entries(c)) {
    if (!field.startsWith("cum_")) continue;
    // Same number, and minimal plain text ("-12.5", "0"), as decimal.js writes it.
    const want = cum.get(field) ?? new Decimal(0);
    expect(value, `${coin} ${field}`).toBe(want.isZero() ? "0" : want.toFixed());
  }
  expect(c.created_time).toBe(String(first?.cTimeMs));
  expect(c.updated_time).toBe(String(last?.cTimeMs));
}

let sb: Sandbox;
let truth: SandboxBill[];
beforeAll(async () => {
  sb = await startSandbox({
    seed: 13,
    billCount: 20000,
    startMs: FIXED_START,
    endMs: FIXED_END,
    limits: null,
    accountEvolution: "manual",
  });
  truth = sb.truth();
});
afterAll(() => sb.close());

describe("collateral from the bill history", () => {
  it("has the latest balance and exact cum_* sums of every coin", () => {
    expect(truth.some((b) => b.coin === "USDT" && b.businessType === "start_liquidate")).toBe(true);
    for (const coin of ["USDT", "USDC"]) expectCollateral(sb, coin, truth);
    const usdt = sb.accountState("2").collateral[0];
    expect(usdt?.cum_position_liquidate_fee_amount).not.toBe("0");
    expect(new Decimal(usdt?.cum_position_fill_fee_amount ?? "0").isNegative()).toBe(true); // fees paid, as written
    const deposits = truth
      .filter((b) => b.coin === "USDT" && b.businessType === "deposit")
      .reduce((s, b) => s.plus(b.amount), new Decimal(0));
    expect(usdt?.cum_deposit_amount).toBe(deposits.toFixed());
  });

  it("follows appended bills, late ones too, and bumps the version (also in manual mode)", async () => {
    const v0 = BigInt(sb.accountState("2").version);
    sb.appendBill({ coin: "USDT", businessType: "deposit", amount: "123.45" });
    sb.appendBill({
      coin: "USDT",
      businessType: "position_open_long",
      symbol: "cmt_btcusdt",
      amount: "-100.5",
      fillFee: "-0.0603",
      cTimeMs: FIXED_START + 1000,
    });
    sb.appendBill({ coin: "USDC", businessType: "withdraw", amount: "-1.000001", cTimeMs: FIXED_START + 86_400_000 });
    const now = sb.truth();
    for (const coin of ["USDT", "USDC"]) expectCollateral(sb, coin, now);
    expect(BigInt(sb.accountState("2").version)).toBe(v0 + 1n);
    const r = await call(sb, { method: "GET", path: ACCOUNT, query: "coinId=2" });
    expect(r.text).toContain(`"version":"${v0 + 1n}"`);
  });

  it("counts a future-dated bill only once its time has come", async () => {
    const before = sb.accountState("1");
    const bill = sb.appendBill({ coin: "USDC", businessType: "transfer_in", amount: "7", cTimeMs: Date.now() + 400 });
    expect(sb.accountState("1")).toEqual(before);
    await new Promise((r) => setTimeout(r, Math.max(0, bill.cTimeMs - Date.now()) + 50));
    const after = sb.accountState("1").collateral[0];
    expect(after?.amount).toBe(bill.balance);
    expect(after?.cum_transfer_in_amount).toBe(
      new Decimal(before.collateral[0]?.cum_transfer_in_amount ?? "0").plus(7).toFixed(),
    );
  });

  it("keeps a scripted collateral value until the history moves", () => {
    const scripted = sb.mutateAccount("2", (s) => {
      const c = s.collateral[0];
      if (c) c.amount = "1.00";
    });
    expect(scripted.collateral[0]?.amount).toBe("1.00");
    expect(sb.accountState("2").collateral[0]?.amount).toBe("1.00");
    const bill = sb.appendBill({ coin: "USDT", businessType: "deposit", amount: "5" });
    expect(sb.accountState("2").collateral[0]?.amount).toBe(bill.balance);
  });
});

describe("collateral at scale", () => {
  it("serves 1,000,000 bills cheaply: one build, then window-sized work per request", async () => {
    const big = await startSandbox({
      seed: 1,
      billCount: 1_000_000,
      startMs: FIXED_START,
      endMs: FIXED_END,
      limits: null,
    });
    try {
      const t0 = performance.now();
      const first = big.accountState("2"); // builds the per-coin lists and checkpoints
      const build = performance.now() - t0;
      const times: number[] = [];
      for (let i = 0; i < 20; i++)
        times.push((await call(big, { method: "GET", path: ACCOUNT, query: `coinId=${i % 2 ? 1 : 2}` })).ms);
      const t1 = performance.now();
      big.appendBill({ coin: "USDT", businessType: "deposit", amount: "1", cTimeMs: FIXED_START + 5 * 86_400_000 }); // late: drops later checkpoints
      const afterLate = big.accountState("2");
      const late = performance.now() - t1;
      const avg = times.reduce((a, b) => a + b, 0) / times.length;
      console.log(
        `account at 1M bills: first build ${build.toFixed(0)} ms, requests avg ${avg.toFixed(1)} ms, after a late bill ${late.toFixed(0)} ms`,
      );
      expect(avg).toBeLessThan(50);
      const deposits = big
        .truth()
        .filter((b) => b.coin === "USDT" && b.businessType === "deposit")
        .reduce((s, b) => s.plus(b.amount), new Decimal(0));
      expect(afterLate.collateral[0]?.cum_deposit_amount).toBe(deposits.toFixed());
      expect(
        new Decimal(afterLate.collateral[0]?.cum_deposit_amount ?? "0")
          .minus(first.collateral[0]?.cum_deposit_amount ?? "0")
          .toFixed(),
      ).toBe("1");
    } finally {
      await big.close();
    }
  });
});
