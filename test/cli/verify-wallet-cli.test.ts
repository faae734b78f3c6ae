// The issue-26 case, as a new user meets it: `sync --once` with a collateral snapshot, then the
// account's newest USDT bill removed from the store. `verify` must not exit 0: its wallet check
// compares the snapshot's reported balance with the bills, reading from the exchange what came after
// the stored cursor, and names the coin, both figures and the difference.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import type { AccountReport } from "../../src/verify/report.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { tamper } from "../support/tamper.ts";

const ACCOUNT = "desk";
let t: MigratedDb;
let sandbox: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createMigratedDb();
  sandbox = await startSandbox({ seed: 41, billCount: 800, limits: null, accountEvolution: "manual" });
  // The newest USDT bill moves the balance (a bill of amount 0 moves nothing any check can see).
  sandbox.appendBill({ coin: "USDT", businessType: "deposit", amount: "42.5" });
  env = {
    DATABASE_URL: t.url,
    ...sandboxExchangeEnv(sandbox.url),
    ACCOUNT_NAME: ACCOUNT,
    SYNC_COIN_IDS: "2,1",
    COIN_NAMES: "2=USDT,1=USDC",
  };
  const sync = await runCli(["sync", "--once", "--json"], env);
  expect(sync.code, sync.stderr).toBe(0);
});
afterAll(async () => {
  await sandbox.close();
  await t.close();
});

const walletChecks = (stdout: string) =>
  (JSON.parse(stdout) as { accounts: AccountReport[] }).accounts[0]!.checks.filter((c) => c.check === "wallet");

describe("verify's wallet check after sync --once", () => {
  it("passes on the clean copy: every coin's reported balance ties", async () => {
    const r = await runCli(["verify", "--account", ACCOUNT, "--json"], env);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(walletChecks(r.stdout).map((c) => `${c.subject}: ${c.status}`)).toEqual([
      "USDC (collateral): pass",
      "USDT (collateral): pass",
    ]);
  });

  it("fails when the newest USDT bill is removed from the store, naming the coin and the difference", async () => {
    const [last] = await t.db.$queryRawUnsafe<{ bill_id: string; amount: string; balance: string }[]>(
      `SELECT bill_id, amount::text, balance::text FROM bills WHERE account_name = $1 AND coin = 'USDT'
         ORDER BY created_at_ms DESC, bill_id::numeric DESC LIMIT 1`,
      ACCOUNT,
    );
    await tamper(t.db, "DELETE FROM bills WHERE account_name = $1 AND bill_id = $2", ACCOUNT, last!.bill_id);
    const r = await runCli(["verify", "--account", ACCOUNT, "--json"], env);
    expect(r.code).toBe(1);
    const usdt = walletChecks(r.stdout).find((c) => c.subject.startsWith("USDT"))!;
    expect(usdt.status).toBe("fail");
    expect(last!.amount).toBe("42.5");
    expect(usdt.details).toMatchObject({ reported: last!.balance, difference: "42.5" });
    // Every stored bill chains up to the last one: the difference arose after it, with no stored bill in between.
    expect(usdt.summary).toMatch(
      /^USDT at .*: reported .*; difference 42\.5; it arose after .* \(0 stored USDT bill\(s\) in that window\)$/,
    );
  });
});
