// The balance chart's downsampling in PostgreSQL: each bucket's first and last balance in ledger
// order (bill id as a number breaks ties within a millisecond), lowest and highest, exactly as
// stored, compared with the same buckets computed here from the bills; and over a million bills it
// returns at most the points asked, through the console's HTTP endpoint as the read-only path does.
// The time it takes is printed (docs/design/console.md records it), not asserted.
import { Decimal } from "decimal.js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readBalanceSeries, type BalanceBucket } from "../../src/console/read/balance-series.ts";
import { startConsoleServer } from "../../src/console/server.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { insertBills } from "../support/insert-bills.ts";

const T0 = Date.UTC(2026, 0, 1);
const DAY_MS = 86_400_000;

interface Bill {
  id: string;
  ms: number;
  balance: string;
}

/** 3000 bills, three per millisecond, whose ids sort differently as text ("501" < "59") and as numbers. */
function smallBills(): Bill[] {
  const bills: Bill[] = [];
  for (let i = 0; i < 3000; i++) {
    const group = Math.floor(i / 3);
    const j = i % 3;
    const id = j === 0 ? BigInt(group) * 10n + 9n : BigInt(group) * 100n + BigInt(j);
    const n = ((i * 7919) % 20011) - 10000;
    const text = `${n < 0 ? "-" : ""}${Math.floor(Math.abs(n) / 100)}.${String(Math.abs(n) % 100).padStart(2, "0")}`;
    bills.push({ id: String(id), ms: T0 + group * 61_000, balance: text });
  }
  return bills;
}

/** The buckets computed from the bills themselves, the way the console's SQL is documented to. */
function expectedBuckets(bills: Bill[], fromMs: number, toMs: number, maxPoints: number): BalanceBucket[] {
  const bucketMs = Math.max(1, Math.ceil((toMs - fromMs) / maxPoints));
  const inLedgerOrder = bills
    .filter((b) => b.ms >= fromMs && b.ms < toMs)
    .sort((a, b) => a.ms - b.ms || (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
  const buckets = new Map<number, Bill[]>();
  for (const b of inLedgerOrder) {
    const k = Math.floor((b.ms - fromMs) / bucketMs);
    buckets.set(k, [...(buckets.get(k) ?? []), b]);
  }
  return [...buckets.values()].map((group) => {
    const byBalance = [...group].sort((a, b) => new Decimal(a.balance).cmp(b.balance));
    return {
      firstMs: group[0]!.ms,
      lastMs: group[group.length - 1]!.ms,
      first: group[0]!.balance,
      last: group[group.length - 1]!.balance,
      low: byBalance[0]!.balance,
      high: byBalance[byBalance.length - 1]!.balance,
      bills: group.length,
    };
  });
}

let t: MigratedDb;
const small = smallBills();

beforeAll(async () => {
  t = await createMigratedDb();
  // Inserted newest first, so that the table's physical order is not the ledger order.
  const rows = [...small].reverse();
  await insertBills(
    t.db,
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
     SELECT 'small', id, 'USDT', '', 'deposit', 0, balance::numeric, 0, timestamptz 'epoch' + ms * interval '1 millisecond', ms, '{}'
     FROM unnest($1::text[], $2::bigint[], $3::text[]) AS r(id, ms, balance)`,
    rows.map((b) => b.id),
    rows.map((b) => String(b.ms)),
    rows.map((b) => b.balance),
  );
});
afterAll(async () => {
  await t?.close();
});

describe("the balance series", () => {
  it.each([
    ["the whole history in 7 buckets", T0, T0 + 2 * DAY_MS, 7],
    [
      "a range cutting through a millisecond group's neighbours, in 1000 buckets",
      T0 + 3_050_000,
      T0 + 40_000_000,
      1000,
    ],
    ["one bucket", T0, T0 + DAY_MS, 1],
  ])("%s: first, last, lowest and highest exactly as the bills give them", async (_name, fromMs, toMs, maxPoints) => {
    const series = await readBalanceSeries(t.db, { account: "small", coin: "USDT", fromMs, toMs, maxPoints });
    const expected = expectedBuckets(small, fromMs, toMs, maxPoints);
    expect(series.buckets.length).toBeLessThanOrEqual(maxPoints);
    expect(series.buckets).toEqual(expected);
  });

  it("answers a million bills with at most the points asked, through the console's endpoint", async () => {
    const n = 1_000_000;
    const stepMs = 30_000;
    await insertBills(
      t.db,
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
       SELECT 'big', (1000000000000 + i)::text, 'USDT', 'cmt_btcusdt', 'position_funding', 0, round(100000 + ((i * 7919) % 20011) / 100.0, 2), 0,
              timestamptz 'epoch' + ($1::bigint + i * $2::bigint) * interval '1 millisecond', $1::bigint + i * $2::bigint, '{}'
       FROM generate_series(0::bigint, $3::bigint - 1) AS i`,
      String(T0),
      String(stepMs),
      String(n),
    );
    await t.db.$executeRawUnsafe("ANALYZE bill_rows");
    const server = await startConsoleServer({
      host: "127.0.0.1",
      port: 0,
      token: undefined,
      databaseUrl: t.url,
      logger: pino({ level: "silent" }),
    });
    try {
      const lastDay = new Date(T0 + (n - 1) * stepMs).toISOString().slice(0, 10);
      const url = `${server.url}api/accounts/big/coins/USDT/balance?from=2026-01-01&to=${lastDay}&points=1000`;
      const timings: number[] = [];
      let body: { buckets: BalanceBucket[]; maxPoints: number } | undefined;
      for (let run = 0; run < 3; run++) {
        const started = performance.now();
        const response = await fetch(url);
        body = (await response.json()) as typeof body;
        timings.push(performance.now() - started);
        expect(response.status).toBe(200);
      }
      const buckets = body!.buckets;
      expect(buckets.length).toBeLessThanOrEqual(1000);
      expect(buckets.reduce((sum, b) => sum + b.bills, 0)).toBe(n);
      const [whole] = await t.db.$queryRawUnsafe<{ low: string; high: string }[]>(
        "SELECT min(balance)::text AS low, max(balance)::text AS high FROM bills WHERE account_name = 'big'",
      );
      expect(buckets[0]!.first).toBe("100000.00");
      expect(Decimal.min(...buckets.map((b) => b.low)).toString()).toBe(new Decimal(whole!.low).toString());
      expect(Decimal.max(...buckets.map((b) => b.high)).toString()).toBe(new Decimal(whole!.high).toString());
      console.log(
        `balance endpoint over ${n} bills: ${buckets.length} points; ${timings.map((ms) => `${Math.round(ms)} ms`).join(", ")} (first request, then warm)`,
      );
    } finally {
      await server.close();
    }
  });
});
