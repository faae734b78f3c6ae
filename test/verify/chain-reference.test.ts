// The balance chain as PostgreSQL computes it (src/verify/chain-sql.ts) against a reference written
// plainly in TypeScript with decimal.js, on generated books built to be awkward: bills of several
// coins in the same millisecond with ids whose text order is not their numeric order, amounts and
// fees of mixed scales, one coin per rule (plain, minus fee, plus fee, none), altered balances; over
// the whole history and over ranges (with each coin's anchor before the range), with a rule given,
// and with few or no breaks listed. Every figure must agree: pairs, the counts of every rule, the
// rule, each break's bill ids, times and balances, truncation, the last bill's time.
import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkBalanceContinuity, type ContinuityOptions, type Rule } from "../../src/verify/balance-continuity.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { rng } from "./seeded-random.ts";

interface Bill {
  coin: string;
  id: string;
  ms: number;
  amount: string;
  balance: string;
  fee: string;
}

const ACCOUNT = "ref";
const COIN_RULES: Record<string, Rule | null> = { PL: "plain", MF: "minus_fee", PF: "plus_fee", NO: null };
const BASE_MS = Date.UTC(2026, 0, 1);

const ledgerOrder = (a: Bill, b: Bill) => a.ms - b.ms || (BigInt(a.id) < BigInt(b.id) ? -1 : 1);

function generate(count: number): Bill[] {
  const random = rng(32);
  const decimal = (max: number) =>
    new Decimal(Math.floor(random() * max * 1e6) - (max * 1e6) / 2).div(10 ** Math.floor(random() * 7)).toFixed();
  const bills: Bill[] = [];
  const balances = new Map<string, Decimal>();
  for (let group = 0; bills.length < count; group++) {
    // Up to six bills in one millisecond, mostly of one coin; their ids (r, then the group in four
    // digits) have different lengths, so text order is not ledger order.
    const ids = new Set<number>();
    const size = 1 + Math.floor(random() * 6);
    while (ids.size < size) ids.add(Math.floor(random() * 3000));
    const pick = () => Object.keys(COIN_RULES)[Math.floor(random() * 4)]!;
    const groupCoin = pick();
    for (const r of [...ids].sort((a, b) => a - b)) {
      const coin = random() < 0.6 ? groupCoin : pick();
      const rule = COIN_RULES[coin]!;
      const amount = decimal(1000);
      const fee = random() < 0.3 ? "0" : new Decimal(decimal(10)).abs().toFixed();
      const previous = balances.get(coin) ?? new Decimal(0);
      const next =
        rule === null
          ? new Decimal(decimal(100000))
          : previous.plus(amount).plus(rule === "minus_fee" ? new Decimal(fee).neg() : rule === "plus_fee" ? fee : 0);
      balances.set(coin, next);
      bills.push({
        coin,
        id: `${r + 1}${String(group).padStart(4, "0")}`,
        ms: BASE_MS + group * 7,
        amount,
        balance: next.toFixed(),
        fee,
      });
    }
  }
  // Altered balances: each breaks the pair before it and the pair after it.
  for (const k of [40, 41, 300, 777]) bills[k]!.balance = new Decimal(bills[k]!.balance).plus("0.01").toFixed();
  return bills;
}

/** The reference: the chain computed row by row. */
function reference(bills: Bill[], o: Omit<ContinuityOptions, "account">) {
  const from = o.fromMs ?? 0;
  const to = o.toMs ?? Number.MAX_SAFE_INTEGER;
  const maxBreaks = o.maxBreaks ?? 1000;
  const coins = [...new Set(bills.filter((b) => b.ms >= from && b.ms <= to).map((b) => b.coin))].sort();
  return coins.map((coin) => {
    const chain = bills.filter((b) => b.coin === coin && b.ms <= to).sort(ledgerOrder);
    const first = chain.findIndex((b) => b.ms >= from);
    const pairs: [Bill, Bill][] = [];
    for (let i = Math.max(1, first); i < chain.length; i++) pairs.push([chain[i - 1]!, chain[i]!]);
    const expected = (rule: Rule, [p, b]: [Bill, Bill]) => {
      const e = new Decimal(p.balance).plus(b.amount);
      return rule === "plain" ? e : rule === "minus_fee" ? e.minus(b.fee) : e.plus(b.fee);
    };
    const explains = (rule: Rule, pair: [Bill, Bill]) => expected(rule, pair).eq(pair[1].balance);
    const explained = {
      plain: pairs.filter((p) => explains("plain", p)).length,
      minus_fee: pairs.filter((p) => explains("minus_fee", p)).length,
      plus_fee: pairs.filter((p) => explains("plus_fee", p)).length,
    };
    const best = (["plain", "minus_fee", "plus_fee"] as Rule[]).reduce((a, b) => (explained[b] > explained[a] ? b : a));
    const rule = o.rules?.[coin] ?? (pairs.length === 0 || explained[best] >= pairs.length * 0.9 ? best : null);
    const broken = rule ? pairs.filter((p) => !explains(rule, p)) : [];
    return {
      coin,
      pairs: pairs.length,
      rule,
      explained,
      truncated: broken.length > maxBreaks,
      lastAtMs: chain.at(-1)!.ms,
      breaks: broken.slice(0, maxBreaks).map(([p, b]) => ({
        previousBillId: p.id,
        billId: b.id,
        expected: expected(rule!, [p, b]).toFixed(),
        actual: b.balance,
        gapMs: b.ms - p.ms,
        previousAt: new Date(p.ms).toISOString(),
        at: new Date(b.ms).toISOString(),
      })),
    };
  });
}

const bills = generate(2000);
let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
  await t.db.$executeRawUnsafe(
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
                        created_at_ms, raw)
     SELECT $1, id, coin, '', 'deposit', amount, balance, fee, to_timestamp(ms / 1000.0), ms, '{}'
     FROM unnest($2::text[], $3::text[], $4::numeric[], $5::numeric[], $6::numeric[], $7::bigint[])
       AS b(id, coin, amount, balance, fee, ms)`,
    ACCOUNT,
    bills.map((b) => b.id),
    bills.map((b) => b.coin),
    bills.map((b) => b.amount),
    bills.map((b) => b.balance),
    bills.map((b) => b.fee),
    bills.map((b) => b.ms),
  );
});
afterAll(async () => {
  await t.close();
});

const at = (k: number) => bills[k]!.ms;

describe("verify: the balance chain in SQL against a reference in TypeScript", () => {
  it.each([
    ["the whole history", {}],
    ["a range from a bill in the middle (anchored)", { fromMs: at(700) }],
    ["a range in the middle (anchored)", { fromMs: at(250), toMs: at(1200) }],
    ["a range up to a bill (no anchor)", { toMs: at(900) }],
    ["one millisecond of ties", { fromMs: at(300), toMs: at(300) }],
    ["a rule given per coin (the worker's incremental form)", { rules: { PL: "minus_fee", NO: "plain" } }],
    ["at most three breaks listed", { maxBreaks: 3, rules: { NO: "plus_fee" } }],
    ["no break listed (the statement's roll-forward)", { maxBreaks: 0, fromMs: at(100) }],
  ] as [string, Omit<ContinuityOptions, "account">][])("%s", async (_, o) => {
    const got = await checkBalanceContinuity(t.db, { account: ACCOUNT, ...o });
    const want = reference(bills, o);
    expect(got.map((c) => c.coin)).toEqual(want.map((c) => c.coin));
    for (const [k, c] of got.entries()) {
      const w = want[k]!;
      expect({ ...c, breaks: undefined }, c.coin).toEqual({ ...w, breaks: undefined });
      expect(
        c.breaks.map((b) => ({ ...b, expected: new Decimal(b.expectedBalance).toFixed() })),
        c.coin,
      ).toEqual(
        w.breaks.map((b) => ({
          coin: c.coin,
          previousBillId: b.previousBillId,
          billId: b.billId,
          expectedBalance: expect.any(String),
          expected: b.expected,
          actualBalance: expect.any(String),
          gapMs: b.gapMs,
          previousAt: b.previousAt,
          at: b.at,
          previousAtMs: Number(new Date(b.previousAt)),
          atMs: Number(new Date(b.at)),
        })),
      );
      for (const [j, b] of c.breaks.entries()) expect(new Decimal(b.actualBalance).eq(w.breaks[j]!.actual)).toBe(true);
    }
    // The generated books exercise what they are meant to.
    if (Object.keys(o).length === 0) {
      expect(got.map((c) => [c.coin, c.rule])).toEqual([
        ["MF", "minus_fee"],
        ["NO", null],
        ["PF", "plus_fee"],
        ["PL", "plain"],
      ]);
      expect(got.flatMap((c) => c.breaks).length).toBeGreaterThanOrEqual(3);
      // Consecutive bills of a coin in one millisecond whose ids' text order is not ledger order.
      const misordered = bills.filter((b, k) =>
        bills.slice(k + 1).some((n) => n.ms === b.ms && n.coin === b.coin && n.id < b.id),
      );
      expect(misordered.length).toBeGreaterThan(10);
    }
  });
});
