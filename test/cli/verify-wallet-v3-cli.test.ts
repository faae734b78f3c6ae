// verify with the account's key asks the exchange for the balances now (v3 GET /capi/v3/account/balance)
// and ties each coin's to the bills, the ones after the stored cursor read but not stored; an
// exchange that answers 404 there is remembered and not asked again.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { readV3BalanceServed } from "../../src/store/exchange-profiles.ts";
import type { AccountReport } from "../../src/verify/report.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

const ACCOUNT = "desk";
let t: MigratedDb;
let served: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createMigratedDb();
  served = await startSandbox({ seed: 43, billCount: 600, limits: null, accountEvolution: "manual", v3Balance: true });
  env = { DATABASE_URL: t.url, ...sandboxExchangeEnv(served.url), ACCOUNT_NAME: ACCOUNT, COIN_NAMES: "2=USDT,1=USDC" };
  const sync = await runCli(["sync", "--once", "--json"], env);
  expect(sync.code, sync.stderr).toBe(0);
});
afterAll(async () => {
  await served.close();
  await t.close();
});

const walletChecks = (stdout: string) =>
  (JSON.parse(stdout) as { accounts: AccountReport[] }).accounts[0]!.checks.filter((c) => c.check === "wallet");

describe("verify's reading of the balances now", () => {
  it("ties every coin's v3 balance, bills filed after the sync included", async () => {
    served.appendBill({ coin: "USDT", businessType: "deposit", amount: "7.25" });
    const r = await runCli(["verify", "--account", ACCOUNT, "--json"], env);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(
      walletChecks(r.stdout)
        .map((c) => `${c.subject}: ${c.status}`)
        .sort(),
    ).toEqual(["USDC (v3-balance): pass", "USDT (v3-balance): pass"]);
    expect(await readV3BalanceServed(t.db, ACCOUNT)).toBe(true);
  });

  it("an exchange without the endpoint is remembered and not asked again", async () => {
    const other = await startSandbox({ seed: 43, billCount: 600, limits: null, accountEvolution: "manual" });
    try {
      const at = { ...env, ...sandboxExchangeEnv(other.url), ACCOUNT_NAME: "plain" };
      expect((await runCli(["sync", "--once"], at)).code).toBe(0);
      expect((await runCli(["verify", "--account", "plain", "--json"], at)).code).toBe(0);
      expect(await readV3BalanceServed(t.db, "plain")).toBe(false);
      const before = other.stats().requests;
      expect((await runCli(["verify", "--account", "plain", "--json"], at)).code).toBe(0);
      // No balance request (and, with no reading newer than the stored bills, no bills read either).
      expect(other.stats().requests - before).toBe(0);
    } finally {
      await other.close();
    }
  });
});
