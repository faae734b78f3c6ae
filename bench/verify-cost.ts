// Benchmark: what verify costs. A full `verify` over an account's whole history, against the
// worker's incremental form after a typical sync (a handful of new bills): the incremental cost
// should follow what is new, not the size of the history.
//   npm run bench -- --only verify --verify-bills 1000000
import type { Bill } from "../src/exchange/bill-item.ts";
import { commitBillsWindow } from "../src/store/bills-window.ts";
import { createDb } from "../src/store/prisma.ts";
import { verifyIncrementally } from "../src/verify/incremental.ts";
import { verifyAccount } from "../src/verify/verify-account.ts";
import { Cleanup } from "./cleanup.ts";
import { benchDatabase } from "./postgres.ts";
import { int } from "./report.ts";

export interface VerifyCost {
  bills: number;
  fullSeconds: number;
  firstIncrementalSeconds: number;
  incrementalSeconds: number;
  newBills: number;
}

const ACCOUNT = "bench";
const seconds = async (fn: () => Promise<unknown>) => {
  const started = performance.now();
  await fn();
  return (performance.now() - started) / 1000;
};

export async function verifyCost(billCount: number, newBills = 20): Promise<VerifyCost> {
  const scope = new Cleanup();
  try {
    const database = await benchDatabase(scope);
    const db = createDb(database.url);
    scope.add("disconnect Prisma", () => db.$disconnect());
    // A chained history in two coins, one bill per 10 s, written in one statement (the cost of
    // loading it is not what is measured).
    await db.$executeRawUnsafe(
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
       SELECT $1, (1000000000000000000 + g)::text, c, 'cmt_btcusdt', 'position_funding', a,
              sum(a) OVER (PARTITION BY c ORDER BY g), 0, timestamptz 'epoch' + t * interval '1 millisecond', t, '{}'
       FROM (SELECT g, CASE WHEN g % 3 = 0 THEN 'USDC' ELSE 'USDT' END AS c, ((g * 7919) % 2001 - 1000) / 100.0 AS a,
                    1700000000000 + g * 10000 AS t FROM generate_series(1::bigint, $2::bigint) g) s`,
      ACCOUNT,
      billCount,
    );
    await db.$executeRawUnsafe(
      "INSERT INTO sync_state (account_name, stream, cursor_ms) VALUES ($1, 'bills', $2::bigint)",
      ACCOUNT,
      String(1700000000000 + billCount * 10000),
    );
    await db.$executeRawUnsafe("ANALYZE bills");
    const options = { account: ACCOUNT, coinNames: {}, lookbackMs: 600_000, now: 1700000000000 + billCount * 10000 };
    const fullSeconds = await seconds(() => verifyAccount(db, options));
    const firstIncrementalSeconds = await seconds(() => verifyIncrementally(db, options));
    // A typical sync: a few new bills after the last one, each chaining on its coin's balance.
    const last = await db.$queryRawUnsafe<{ coin: string; balance: string }[]>(
      "SELECT DISTINCT ON (coin) coin, balance::text FROM bills WHERE account_name = $1 ORDER BY coin, created_at_ms DESC",
      ACCOUNT,
    );
    const balance = new Map(last.map((r) => [r.coin, Number(r.balance) * 100]));
    const bills: Bill[] = [];
    for (let i = 1; i <= newBills; i++) {
      const coin = i % 2 ? "USDT" : "USDC";
      balance.set(coin, balance.get(coin)! + 150);
      const id = String(2000000000000000000n + BigInt(i));
      bills.push({
        billId: id,
        coin,
        symbol: "",
        businessType: "deposit",
        amount: "1.5",
        balance: (balance.get(coin)! / 100).toFixed(2),
        fillFee: "0",
        cTimeMs: options.now + i,
        raw: {},
      });
    }
    await commitBillsWindow(db, {
      accountName: ACCOUNT,
      stream: "bills",
      cursorMs: options.now + newBills,
      bills,
      rejected: [],
      context: {},
    });
    const incrementalSeconds = await seconds(() =>
      verifyIncrementally(db, { ...options, now: options.now + newBills }),
    );
    return { bills: billCount, fullSeconds, firstIncrementalSeconds, incrementalSeconds, newBills };
  } finally {
    await scope.run();
  }
}

export const VERIFY_METHOD = [
  "A chained two-coin history of N bills is written in one statement into a fresh migrated database.",
  "Then, timed one after another: `verifyAccount` over the whole history (what `ledger-sync verify` runs); the worker's first `verifyIncrementally` (no verify_state yet: the whole history); and an incremental run after 20 new bills were committed through the bills write path.",
];

export function verifyRows(r: VerifyCost, note: string): [string, string][] {
  return [
    ["bills of history", `${int(r.bills)}${note}`],
    ["full `verify`", `${r.fullSeconds.toFixed(2)} s`],
    ["worker's first incremental run (whole history)", `${r.firstIncrementalSeconds.toFixed(2)} s`],
    [`worker's incremental run after ${r.newBills} new bills`, `${(r.incrementalSeconds * 1000).toFixed(0)} ms`],
  ];
}
