// verify of every account: the accounts with bills found by a loose index scan (the same list as
// SELECT DISTINCT), outcomes handed on in account order whatever order they finish in, with no more
// than the given number at once, a failure thrown in its place; and `ledger-sync verify` with no
// --account streaming one JSON report of every account, with one progress line on stderr.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountReport } from "../../src/verify/report.ts";
import { accountsWithBills, inAccountOrder } from "../../src/verify/verify-all.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

const ACCOUNTS = ["b-two", "a-one", "c-three", "a-one-and-more"];
let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
  // Per account, a USDT chain of 20 bills (balance = previous + amount), the third account's broken.
  for (const [k, account] of ACCOUNTS.entries()) {
    await t.db.$executeRawUnsafe(
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
                          created_at_ms, raw)
       SELECT $1, g::text, 'USDT', '', 'deposit', 1, g + CASE WHEN $2 AND g > 5 THEN 1 ELSE 0 END, 0,
              to_timestamp(g), g * 1000, '{}'
       FROM generate_series(1, 20) g`,
      account,
      k === 2,
    );
  }
});
afterAll(async () => {
  await t.close();
});

describe("verify of every account", () => {
  it("lists the accounts with bills as SELECT DISTINCT does", async () => {
    const distinct = await t.db.$queryRawUnsafe<{ a: string }[]>(
      "SELECT DISTINCT account_name AS a FROM bills ORDER BY 1",
    );
    expect(await accountsWithBills(t.db)).toEqual(distinct.map((r) => r.a));
    expect(await accountsWithBills(t.db)).toHaveLength(ACCOUNTS.length);
  });

  it("hands outcomes on in account order, at most `concurrency` running at once", async () => {
    const names = Array.from({ length: 30 }, (_, k) => `acct-${k}`);
    let running = 0;
    let most = 0;
    const seen: string[] = [];
    for await (const name of inAccountOrder(names, 4, async (account) => {
      most = Math.max(most, ++running);
      await sleep((7 * Number(account.slice(5))) % 11);
      running--;
      return account;
    }))
      seen.push(name);
    expect(seen).toEqual(names);
    expect(most).toBe(4);
  });

  it("throws a failure where its outcome would have come, and starts no account after it", async () => {
    const started: number[] = [];
    const seen: number[] = [];
    const run = async () => {
      for await (const k of inAccountOrder(
        Array.from({ length: 20 }, (_, k) => String(k)),
        3,
        async (account) => {
          started.push(Number(account));
          await sleep(1);
          if (account === "5") throw new Error("account 5 failed");
          return Number(account);
        },
      ))
        seen.push(k);
    };
    await expect(run()).rejects.toThrow("account 5 failed");
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(Math.max(...started)).toBeLessThanOrEqual(7);
  });

  it("ledger-sync verify: every account in one JSON report, one progress line on stderr", async () => {
    const r = await runCli(["verify", "--no-exchange", "--json"], { DATABASE_URL: t.url });
    expect(r.code, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout) as { ok: boolean; accounts: AccountReport[] };
    expect(out.ok).toBe(false);
    expect(out.accounts.map((a) => a.account)).toEqual([...ACCOUNTS].sort());
    const continuity = (account: string) =>
      out.accounts.find((a) => a.account === account)!.checks.find((c) => c.check === "balance-continuity")!.status;
    expect(continuity("c-three")).toBe("fail");
    expect(continuity("a-one")).toBe("pass");
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z verify: 4\/4 accounts, 80 bills, \d+ bills\/s, ETA 0:00$/);
    expect(lines.slice(1)).toEqual(["ledger-sync: verification failed: see the report"]);
  });
});
