// Statement figures against an independent computation over the sandbox's full true history, for two
// whole months and a range across them; one bill is filed late (hidden from the exchange's answers
// until revealed), so August is first stated without it (its balance chain broken, as it should be)
// and, once the bill is in, with it. Real PostgreSQL, the bills stream, the sandbox over HTTP.
import { Decimal } from "decimal.js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxBill } from "../../src/sandbox/index.ts";
import { buildStatement, FUNDING_TYPE, TRADING_TYPES, type Statement } from "../../src/statement/statement.ts";
import { syncAccountSnapshots } from "../../src/streams/snapshots/index.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { AUGUST, JULY, expectedFromBills, reread, syncedBooks, type Books } from "../periods/fixture.ts";

let b: Books;
let late: SandboxBill;
const coinNames = { "2": "USDT", "1": "USDC" };

beforeAll(async () => {
  b = await syncedBooks({
    seed: 7,
    hide: (truth) => {
      const august = truth.filter(
        (x) => x.cTimeMs > AUGUST.fromMs + 86_400_000 && x.coin === "USDT" && x.businessType === "margin_move_in",
      );
      late = august[Math.floor(august.length / 2)]!;
      return [late.billId];
    },
  });
  const client = sandboxClient(b.sandbox);
  try {
    const snapshot = { db: b.t.db, client, logger: pino({ level: "silent" }), accountName: b.account };
    await syncAccountSnapshots({ ...snapshot, coinIds: ["2", "1"], retentionDays: undefined });
  } finally {
    await client.close();
  }
});
afterAll(async () => {
  await b.close();
});

const statementOf = (period: { label: string; fromMs: number; toMs: number }) =>
  buildStatement(b.t.db, { account: b.account, period, coinNames });

/** Every figure of the statement equals the independent computation over `bills`. */
function expectFigures(s: Statement, bills: SandboxBill[]) {
  const expected = expectedFromBills(bills, s.period.fromMs, s.period.toMs);
  expect(s.coins.map((c) => c.coin).sort()).toEqual(Object.keys(expected).sort());
  let total = 0;
  for (const c of s.coins) {
    const e = expected[c.coin]!;
    expect(c.opening?.balance ?? null, c.coin).toBe(e.opening);
    expect(c.closing.balance, c.coin).toBe(e.closing);
    expect(c.movements.map((m) => m.businessType).sort(), c.coin).toEqual(Object.keys(e.movements).sort());
    for (const m of c.movements) {
      const x = e.movements[m.businessType]!;
      expect(m.bills, `${c.coin} ${m.businessType}`).toBe(x.bills);
      expect(new Decimal(m.amount).eq(x.amount), `${c.coin} ${m.businessType} ${m.amount} vs ${x.amount}`).toBe(true);
      expect(new Decimal(m.fillFee).eq(x.fillFee), `${c.coin} ${m.businessType} fee`).toBe(true);
      total += m.bills;
    }
    const sumOf = (types: string[], f: "amount" | "fillFee") =>
      Object.entries(e.movements)
        .filter(([t]) => types.includes(t))
        .reduce((a, [, m]) => a.plus(m[f]), new Decimal(0));
    const all = Object.keys(e.movements);
    expect(new Decimal(c.funding).eq(sumOf([FUNDING_TYPE], "amount")), `${c.coin} funding`).toBe(true);
    expect(new Decimal(c.trading).eq(sumOf(TRADING_TYPES, "amount")), `${c.coin} trading`).toBe(true);
    expect(new Decimal(c.fees).eq(sumOf(all, "fillFee")), `${c.coin} fees`).toBe(true);
    expect(new Decimal(c.total.amount).eq(sumOf(all, "amount")), `${c.coin} total`).toBe(true);
  }
  expect(s.bills).toBe(total);
}

describe("statement figures", () => {
  it("equal the true history for July, whose bills were all filed on time", async () => {
    const s = await statementOf(JULY);
    expectFigures(s, b.sandbox.truth());
    expect(s.bills).toBeGreaterThan(300);
    for (const c of s.coins) expect(c.chain, c.coin).toMatchObject({ ok: true, breaks: 0 });
    for (const c of s.coins) expect(new Decimal(c.chain.difference).isZero(), c.coin).toBe(true);
    // Sums derived from the per-type sums read exactly as PostgreSQL's own sum writes them.
    for (const c of s.coins) {
      const [pg] = await b.t.db.$queryRawUnsafe<{ amount: string; fee: string }[]>(
        `SELECT sum(amount)::text AS amount, sum(fill_fee)::text AS fee FROM bills
         WHERE account_name = $1 AND coin = $2 AND created_at_ms >= $3::bigint AND created_at_ms < $4::bigint`,
        b.account,
        c.coin,
        String(JULY.fromMs),
        String(JULY.toMs),
      );
      expect([c.total.amount, c.fees], c.coin).toEqual([pg!.amount, pg!.fee]);
    }
    expect(s.period).toMatchObject({
      from: "2026-07-01T00:00:00.000Z",
      to: "2026-08-01T00:00:00.000Z",
      end: "excluded",
    });
  });

  it("count a bill at the very start of a period in it, and one at its end in the next (funding at 00:00 UTC)", async () => {
    const atStart = b.sandbox.truth().filter((x) => x.cTimeMs === AUGUST.fromMs);
    expect(atStart.length).toBeGreaterThan(0);
    const [july, august] = [await statementOf(JULY), await statementOf(AUGUST)];
    const fundingBills = (s: Statement) =>
      s.coins
        .flatMap((c) => c.movements.filter((m) => m.businessType === FUNDING_TYPE))
        .reduce((n, m) => n + m.bills, 0);
    const truthFunding = (p: typeof JULY) =>
      b.sandbox.truth().filter((x) => x.businessType === FUNDING_TYPE && x.cTimeMs >= p.fromMs && x.cTimeMs < p.toMs)
        .length;
    expect(fundingBills(july)).toBe(truthFunding(JULY));
    expect(fundingBills(august)).toBe(truthFunding(AUGUST));
  });

  it("state August without the late bill, the chain broken by exactly its amount, then with it once it is in", async () => {
    const stored = b.sandbox.truth().filter((x) => x.billId !== late.billId);
    const before = await statementOf(AUGUST);
    expectFigures(before, stored);
    const usdt = before.coins.find((c) => c.coin === "USDT")!;
    expect(usdt.chain.ok).toBe(false);
    expect(new Decimal(usdt.chain.difference).eq(late.amount)).toBe(true);
    expect(usdt.chain.breaks).toBe(1);
    const across = { label: "across", fromMs: Date.UTC(2026, 6, 15, 12), toMs: Date.UTC(2026, 7, 20) };
    expectFigures(await statementOf(across), stored);

    b.sandbox.revealBill(late.billId);
    await reread(b, AUGUST.fromMs, AUGUST.toMs - 1);
    const after = await statementOf(AUGUST);
    expectFigures(after, b.sandbox.truth());
    for (const c of after.coins) expect(c.chain, c.coin).toMatchObject({ ok: true, breaks: 0 });
    for (const c of after.coins) expect(new Decimal(c.chain.difference).isZero(), c.coin).toBe(true);
    expectFigures(await statementOf(across), b.sandbox.truth());
  });

  it("compare the closing balance with the collateral snapshot nearest the period end (COIN_NAMES)", async () => {
    const s = await statementOf(AUGUST);
    const lastUsdt = b.sandbox
      .truth()
      .filter((x) => x.coin === "USDT")
      .at(-1)!;
    const usdt = s.coins.find((c) => c.coin === "USDT")!;
    expect(usdt.collateral).toHaveLength(1);
    expect(usdt.collateral[0]).toMatchObject({ coinId: "2", records: 1, ledgerBalance: lastUsdt.balance });
    expect(new Decimal(usdt.collateral[0]!.difference!).isZero()).toBe(true);
    expect(new Decimal(usdt.collateral[0]!.amount).eq(lastUsdt.balance)).toBe(true);
    expect(s.collateralNote).toBeNull();
    const without = await buildStatement(b.t.db, { account: b.account, period: AUGUST, coinNames: {} });
    expect(without.coins.every((c) => c.collateral.length === 0)).toBe(true);
    expect(without.collateralNote).toMatch(/COIN_NAMES is not set/);
  });
});
