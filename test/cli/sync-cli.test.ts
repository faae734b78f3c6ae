// `ledger-sync migrate` and `ledger-sync sync --once` as a user runs them: real subprocess, real
// PostgreSQL, the sandbox exchange over HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  sandboxExchangeEnv,
  startSandbox,
  type Sandbox,
} from "../../src/sandbox/index.ts";
import { createDb } from "../../src/store/prisma.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";
import { committedMigrations } from "../store/migrate/helpers.ts";

let database: TestDatabase;
let sandbox: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  sandbox = await startSandbox({ seed: 21, billCount: 1200, accountEvolution: "manual" });
  env = {
    DATABASE_URL: database.url,
    ...sandboxExchangeEnv(sandbox.url),
    ACCOUNT_NAME: "cli",
    BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
  };
});
afterAll(async () => {
  await sandbox.close();
  await database.drop();
});

describe("ledger-sync migrate and sync --once", () => {
  it("migrates, then a second migrate is a no-op", async () => {
    const names = await committedMigrations();
    const first = await runCli(["migrate"], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe(`applied ${names.length} migration(s): ${names.join(", ")}\n`);
    const second = await runCli(["migrate"], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(`up to date (${names.length} migrations already applied)`);
  });

  it("syncs every bill, exits 0; a second run adds nothing", async () => {
    const r = await runCli(["sync", "--once"], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/new 1200, revised 0, quarantined 0/);
    const db = createDb(database.url);
    try {
      expect(await storedBills(db, "cli")).toEqual(asRows(sandbox.truth()));
    } finally {
      await db.$disconnect();
    }
    const again = await runCli(["sync", "--once", "--json"], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      account: "cli",
      bills: { inserted: 0, revised: 0, quarantined: 0 },
    });
  });

  it("sync --once also snapshots every coin in SYNC_COIN_IDS, and snapshot --once reports what changed per coin", async () => {
    const withCoins = { ...env, SYNC_COIN_IDS: "2,1" };
    const r = await runCli(["sync", "--once"], withCoins);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/coin 2 \(version \d+\): account changed/);
    expect(r.stdout).toMatch(/coin 1 \(version \d+\): account changed/);

    const unchanged = await runCli(["snapshot", "--once"], withCoins);
    expect(unchanged.code, unchanged.stderr).toBe(0);
    expect(unchanged.stdout).toMatch(
      /coin 2 \(version \d+\): account unchanged, settings versions \+0 .* opened 0, changed 0, closed 0/,
    );

    const state = sandbox.accountState("2");
    sandbox.mutateAccount("2", (s) => {
      s.positions.pop();
      s.account.leverages[0]!.cross_leverage = "50";
    });
    const changed = await runCli(["snapshot", "--once", "--json"], withCoins);
    expect(changed.code, changed.stderr).toBe(0);
    const coin2 = JSON.parse(changed.stdout).snapshots.coins.find((c: { coinId: string }) => c.coinId === "2");
    expect(coin2).toMatchObject({
      outcome: "stored",
      changes: { accountChanged: true, settingsChanged: { leverages: 1 }, positions: { closed: 1 } },
      positionsOpen: state.positions.length - 1,
    });
  });

  it("snapshot --once needs SYNC_COIN_IDS", async () => {
    const r = await runCli(["snapshot", "--once"], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/SYNC_COIN_IDS is empty/);
  });

  it("stops on an authentication error with the exchange's code, a hint, and no secret in any output", async () => {
    const secret = "wrong-secret-value-123";
    const r = await runCli(["sync", "--once"], {
      ...env,
      EXCHANGE_API_SECRET: secret,
      LOG_LEVEL: "debug",
      ACCOUNT_NAME: "auth",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /ledger-sync: bills: exchange refused the request \(HTTP 4\d\d, code 40009\).*EXCHANGE_API_SECRET/,
    );
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stdout + r.stderr).not.toContain(DEFAULT_SANDBOX_CREDENTIALS.passphrase);
  });
});
