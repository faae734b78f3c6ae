// verify's balance continuity on real PostgreSQL with sandbox data: every injected corruption is
// detected with the right bill ids (50 seeded random cases), clean data passes.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.ts";
import { checkBalanceContinuity } from "../../src/verify/balance-continuity.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { syncFromSandbox } from "../support/sandbox-sync.ts";
import { tamper } from "../support/tamper.ts";
import { rng } from "./seeded-random.ts";

let t: MigratedDb;
type Link = { coin: string; billId: string; amount: string };
let chains: Map<string, Link[]>;
beforeAll(async () => {
  t = await createMigratedDb();
  // A fixed time range: the sandbox's bill ids and ledger order come from the bills' times, so a
  // range ending at "now" gives other chains (and other chosen bills) on every run.
  const startMs = Date.UTC(2026, 9, 1);
  const sandbox = await startSandbox({
    seed: 41,
    billCount: 3000,
    limits: null,
    startMs,
    endMs: startMs + 30 * 86_400_000,
  });
  await syncFromSandbox(t.db, sandbox, "v");
  await sandbox.close();
  await t.db.$executeRawUnsafe("CREATE TABLE bills_backup AS SELECT * FROM bill_rows");
  const rows = await t.db.$queryRawUnsafe<Link[]>(
    `SELECT coin, bill_id AS "billId", amount::text AS amount FROM bills WHERE account_name = 'v' ORDER BY coin, created_at_ms, bill_id::numeric`,
  );
  chains = new Map();
  for (const r of rows) chains.set(r.coin, [...(chains.get(r.coin) ?? []), r]);
});
afterAll(async () => {
  await t.close();
});

// The stored rows back as they were, in two statements on bill_rows (the view writes row by row).
const restore = async () => {
  await tamper(t.db, "DELETE FROM bill_rows");
  await t.db.$executeRawUnsafe("INSERT INTO bill_rows SELECT * FROM bills_backup");
};
const check = async () =>
  (await checkBalanceContinuity(t.db, { account: "v" })).flatMap((c) =>
    c.breaks.map((b) => [b.previousBillId, b.billId]),
  );

describe("verify: balance continuity", () => {
  it("passes on clean data under the rule the sandbox uses (balance = previous + amount)", async () => {
    const coins = await checkBalanceContinuity(t.db, { account: "v" });
    expect(coins.map((c) => c.coin).sort()).toEqual([...chains.keys()].sort());
    for (const c of coins) {
      expect(c).toMatchObject({ rule: "plain", breaks: [], pairs: chains.get(c.coin)!.length - 1 });
    }
  });

  it("detects 100% of 50 random corruptions (deleted bill, altered amount, swapped balances) with the right bill ids", async () => {
    const random = rng(2026);
    const kinds = ["delete", "alter", "swap"] as const;
    for (let i = 0; i < 50; i++) {
      const kind = kinds[i % 3]!;
      const coins = [...chains.keys()];
      const chain = chains.get(coins[Math.floor(random() * coins.length)]!)!;
      // An interior bill: it has a predecessor and a successor in its coin's chain.
      // A bill of amount 0 moves no balance, so deleting one (or swapping balances with one) leaves
      // the chain intact: no continuity check can see it (docs/accounting.md, "Proving the books").
      const moves = (j: number) => Number(kind === "swap" ? chain[j + 1]!.amount : chain[j]!.amount) !== 0;
      let k = 1 + Math.floor(random() * (chain.length - 3));
      while (kind !== "alter" && !moves(k)) k = 1 + Math.floor(random() * (chain.length - 3));
      const [prev, x, next] = [chain[k - 1]!, chain[k]!, chain[k + 1]!];
      const context = `case ${i}: ${kind} around bill ${x.billId} (${x.coin})`;
      if (kind === "delete") {
        await tamper(t.db, "DELETE FROM bills WHERE account_name = 'v' AND bill_id = $1", x.billId);
        expect(await check(), context).toContainEqual([prev.billId, next.billId]);
      } else if (kind === "alter") {
        await tamper(
          t.db,
          "UPDATE bills SET amount = amount + 0.00000001 WHERE account_name = 'v' AND bill_id = $1",
          x.billId,
        );
        expect(await check(), context).toEqual([[prev.billId, x.billId]]);
      } else {
        await tamper(
          t.db,
          `UPDATE bills b SET balance = o.balance FROM bills o
           WHERE b.account_name = 'v' AND o.account_name = 'v' AND ((b.bill_id = $1 AND o.bill_id = $2) OR (b.bill_id = $2 AND o.bill_id = $1))`,
          x.billId,
          next.billId,
        );
        const breaks = await check();
        expect(breaks, context).toContainEqual([prev.billId, x.billId]);
        expect(breaks, context).toContainEqual([x.billId, next.billId]);
      }
      await restore();
    }
    expect(await check()).toEqual([]);
  });

  it("says so, instead of flagging every row, when no rule explains the balances", async () => {
    await t.db.$executeRawUnsafe(
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
       SELECT 'noise', g::text, 'USDT', '', 'deposit', 1, (g * 7919) % 1000, 0, now(), g, '{}' FROM generate_series(1, 200) g`,
    );
    const [c] = await checkBalanceContinuity(t.db, { account: "noise" });
    expect(c).toMatchObject({ rule: null, breaks: [], pairs: 199 });
  });

  it("ledger-sync verify: exit 0 on clean books, 1 with the breaks listed when a bill is missing", async () => {
    const clean = await runCli(["verify", "--account", "v", "--json"], { DATABASE_URL: t.url });
    expect(clean.code, clean.stderr).toBe(0);
    expect(JSON.parse(clean.stdout).ok).toBe(true);
    const chain = [...chains.values()][0]!;
    await tamper(t.db, "DELETE FROM bills WHERE account_name = 'v' AND bill_id = $1", chain[10]!.billId);
    const broken = await runCli(["verify", "--account", "v", "--json"], { DATABASE_URL: t.url });
    expect(broken.code).toBe(1);
    const report = JSON.parse(broken.stdout) as {
      ok: boolean;
      accounts: { checks: { status: string; details?: { breaks?: { previousBillId: string; billId: string }[] } }[] }[];
    };
    expect(report.ok).toBe(false);
    expect(report.accounts[0]!.checks.flatMap((c) => c.details?.breaks ?? [])).toContainEqual(
      expect.objectContaining({ previousBillId: chain[9]!.billId, billId: chain[11]!.billId }),
    );
    await restore();
  });
});
