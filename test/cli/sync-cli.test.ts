// `ledger-sync migrate` and `ledger-sync sync --once` as a user runs them: real subprocess, real
// PostgreSQL, the sandbox exchange over HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SANDBOX_CREDENTIALS, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { createDb } from "../../src/store/prisma.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";

let database: TestDatabase;
let sandbox: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  sandbox = await startSandbox({ seed: 21, billCount: 1200 });
  env = {
    DATABASE_URL: database.url,
    EXCHANGE_BASE_URL: sandbox.url,
    EXCHANGE_API_KEY: DEFAULT_SANDBOX_CREDENTIALS.apiKey,
    EXCHANGE_API_SECRET: DEFAULT_SANDBOX_CREDENTIALS.apiSecret,
    EXCHANGE_API_PASSPHRASE: DEFAULT_SANDBOX_CREDENTIALS.passphrase,
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
    const first = await runCli(["migrate"], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/applied 1 migration\(s\): \d+_init/);
    const second = await runCli(["migrate"], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/up to date \(1 migrations already applied\)/);
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
    expect(JSON.parse(again.stdout)).toMatchObject({ account: "cli", bills: { inserted: 0, revised: 0, quarantined: 0 } });
  });

  it("stops on an authentication error with the exchange's code, a hint, and no secret in any output", async () => {
    const secret = "wrong-secret-value-123";
    const r = await runCli(["sync", "--once"], { ...env, EXCHANGE_API_SECRET: secret, LOG_LEVEL: "debug", ACCOUNT_NAME: "auth" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ledger-sync: bills: exchange refused the request \(HTTP 4\d\d, code 40009\).*EXCHANGE_API_SECRET/);
    expect(r.stdout + r.stderr).not.toContain(secret);
    expect(r.stdout + r.stderr).not.toContain(DEFAULT_SANDBOX_CREDENTIALS.passphrase);
  });
});
