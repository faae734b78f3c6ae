// daily_rollups under concurrent writers, on real PostgreSQL: two transactions adding bills to the
// same row both count; a revision racing a new bill of the same row still leaves the row equal to
// its bills, scale included, whichever locks the row first; and many window writes of the same
// days at once neither lose an update nor deadlock.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bill } from "../../../src/exchange/bill-item.ts";
import { commitBillsWindow } from "../../../src/store/bills-window.ts";
import { createDb, directPool, type Db } from "../../../src/store/prisma.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { expectRollupsMatchBills } from "./checks.ts";

let t: MigratedDb;
let a: pg.Client;
let b: pg.Client;
beforeAll(async () => {
  t = await createMigratedDb();
  [a, b] = [new pg.Client({ connectionString: t.url }), new pg.Client({ connectionString: t.url })];
  await Promise.all([a.connect(), b.connect()]);
});
afterAll(async () => {
  await Promise.all([a.end(), b.end()]);
  await t.close();
});

const T0 = Date.UTC(2026, 2, 1, 12);
const insert = (c: pg.Client, account: string, id: string, amount: string, fillFee = "0") =>
  c.query(
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
     VALUES ($1, $2, 'USDT', 'cmt_btcusdt', 'position_close_long', $3, 0, $4, timestamptz 'epoch' + $5::bigint * interval '1 ms', $5, '{}')`,
    [account, id, amount, fillFee, T0 + Number(id)],
  );
/** A revision as ledger-sync's write declares it (the trigger files the old version). */
const revise = (c: pg.Client, account: string, id: string, amount: string) =>
  c.query(
    `WITH path AS (SELECT set_config('ledger_sync.revision', 'on', true))
     UPDATE bills SET amount = $3 FROM path WHERE account_name = $1 AND bill_id = $2`,
    [account, id, amount],
  );

/** Resolves once `c`'s backend waits for a lock another transaction holds. */
async function blocked(c: pg.Client): Promise<void> {
  const pid = (c as unknown as { processID: number }).processID;
  for (let i = 0; i < 200; i++) {
    const rows = await t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
      pid,
    );
    if (rows[0]!.n === 1) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("the second transaction never waited for the first");
}

const rollup = async (account: string) =>
  t.db.$queryRawUnsafe<{ bills: string; amount: string }[]>(
    "SELECT bills::text, amount::text FROM daily_rollups WHERE account_name = $1",
    account,
  );

/**
 * `first` writes in a transaction it leaves open; `second` then writes in another and must wait
 * for it; `first` commits, then `second` finishes and commits.
 */
async function interleave(
  first: [pg.Client, (c: pg.Client) => Promise<unknown>],
  second: [pg.Client, (c: pg.Client) => Promise<unknown>],
): Promise<void> {
  await first[0].query("BEGIN");
  await first[1](first[0]);
  await second[0].query("BEGIN");
  const waiting = second[1](second[0]);
  await blocked(second[0]);
  await first[0].query("COMMIT");
  await waiting;
  await second[0].query("COMMIT");
}

describe("concurrent writers", () => {
  it("two transactions adding bills to the same row: the second waits, and both count", async () => {
    await interleave([a, (c) => insert(c, "two", "1", "1.25")], [b, (c) => insert(c, "two", "2", "2.5")]);
    expect(await rollup("two")).toEqual([{ bills: "2", amount: "3.75" }]);
    await expectRollupsMatchBills(t.db);
  });

  it("a revision that takes the row first, then a new bill of that row", async () => {
    await insert(a, "race1", "1", "1.5");
    await interleave([a, (c) => revise(c, "race1", "1", "1.500000")], [b, (c) => insert(c, "race1", "2", "0.1")]);
    expect(await rollup("race1")).toEqual([{ bills: "2", amount: "1.600000" }]);
    await expectRollupsMatchBills(t.db);
  });

  it("a new bill that takes the row first, then a revision of that row: the revision sees the new bill's scale", async () => {
    await insert(a, "race2", "1", "1.5");
    await interleave(
      [b, (c) => insert(c, "race2", "2", "0.000000001")],
      [a, (c) => revise(c, "race2", "1", "1.50000000000")],
    );
    // Were the revision's rounding done in its first snapshot, it would drop the new bill's digits.
    expect(await rollup("race2")).toEqual([{ bills: "2", amount: "1.50000000100" }]);
    await revise(a, "race2", "1", "1.5");
    expect(await rollup("race2")).toEqual([{ bills: "2", amount: "1.500000001" }]);
    await expectRollupsMatchBills(t.db);
  });

  it("eight window writers of the same days at once: no update lost, no deadlock", async () => {
    const dbs: Db[] = [createDb(t.url), createDb(t.url)];
    const types = ["position_open_long", "position_close_short", "position_funding", "order_fill_fee_income"];
    const batch = (writer: number, n: number): Bill[] =>
      Array.from({ length: 150 }, (_, i) => {
        const k = writer * 100_000 + n * 1000 + i;
        return {
          billId: String(10_000_000 + k),
          coin: k % 2 ? "USDT" : "USDC",
          symbol: `cmt_s${k % 3}`,
          businessType: types[k % 4]!,
          amount: `${(k % 2001) - 1000}.${String(k % 997).padStart(k % 5, "0")}`,
          balance: "0",
          fillFee: `-0.${k % 89}`,
          cTimeMs: T0 + (k % 2) * 86_400_000 + (k % 5000),
          raw: {},
        };
      });
    try {
      await Promise.all(
        Array.from({ length: 8 }, async (_, writer) => {
          for (let n = 0; n < 12; n++)
            await commitBillsWindow(dbs[writer % 2]!, {
              accountName: "many",
              stream: "bills",
              cursorStream: null,
              cursorMs: T0,
              bills: batch(writer, n),
              rejected: [],
              context: {},
            });
        }),
      );
    } finally {
      // Only the bills write ran, on the pool under each client, which Prisma never opened to end.
      for (const db of dbs) {
        await db.$disconnect();
        const pool = directPool(db);
        if (pool && !pool.ending) await pool.end();
      }
    }
    const [row] = await t.db.$queryRawUnsafe<{ n: string }[]>(
      "SELECT sum(bills)::text AS n FROM daily_rollups WHERE account_name = 'many'",
    );
    expect(row!.n).toBe(String(8 * 12 * 150));
    await expectRollupsMatchBills(t.db);
  });
});
