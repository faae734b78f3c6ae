// `ledger-sync accounts …` as an operator runs it: real subprocess, real PostgreSQL, the sandbox
// exchange serving a fleet of distinct accounts over HTTP. Keys are proven before they are stored,
// one exchange account is never registered twice, secrets are sealed (never in a dump, never
// readable by the read-only role), and the commands that call the exchange take registered accounts.
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateMasterKeyHex } from "../../src/config/master-key.ts";
import { fleetCredentials, fleetUid, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { createDb } from "../../src/store/prisma.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { dumpText } from "../support/dump.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";

const SEED = 31;
let database: TestDatabase;
let sandbox: Sandbox;
let base: Record<string, string>;
const masterKey = generateMasterKeyHex();

/** PREFIX_API_KEY, … for fleet account i. */
function keyEnv(prefix: string, i: number): Record<string, string> {
  const c = fleetCredentials(SEED, i);
  return {
    [`${prefix}_API_KEY`]: c.apiKey,
    [`${prefix}_API_SECRET`]: c.apiSecret,
    [`${prefix}_API_PASSPHRASE`]: c.passphrase,
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  sandbox = await startSandbox({ seed: SEED, fleet: { accounts: 8, billsPerAccount: 30 }, accountEvolution: "manual" });
  base = {
    DATABASE_URL: database.url,
    EXCHANGE_BASE_URL: sandbox.url,
    LEDGER_SYNC_MASTER_KEY: masterKey,
    BACKFILL_FROM: String(Date.now() - 40 * 86_400_000),
  };
  const m = await runCli(["migrate"], base);
  expect(m.code, m.stderr).toBe(0);
});
afterAll(async () => {
  await sandbox.close();
  await database.drop();
});

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: database.url });
  await c.connect();
  try {
    return (await c.query<T>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

describe("ledger-sync accounts", () => {
  it("add proves the key, reads the UID and seals the credentials", async () => {
    const r = await runCli(["accounts", "add", "alpha", "--coins", "2", "--from-env", "A"], {
      ...base,
      ...keyEnv("A", 0),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`account alpha added (UID ${fleetUid(SEED, 0)})`);
    const rows = await query<{ uid: string; master_key_id: string; coin_ids: string[] }>(
      "SELECT uid, master_key_id, coin_ids FROM accounts WHERE name = 'alpha'",
    );
    expect(rows).toEqual([
      { uid: fleetUid(SEED, 0), master_key_id: expect.stringMatching(/^[0-9a-f]{16}$/), coin_ids: ["2"] },
    ]);
  });

  it("refuses the same exchange account under a second name, naming the first", async () => {
    const r = await runCli(["accounts", "add", "alpha-again", "--coins", "2", "--from-env", "A"], {
      ...base,
      ...keyEnv("A", 0),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`UID ${fleetUid(SEED, 0)}) is registered already as "alpha"`);
    expect(await query("SELECT name FROM accounts WHERE name = 'alpha-again'")).toEqual([]);
  });

  it("add reads the UID through the public account read when the seed's path is not served", async () => {
    const publicOnly = await startSandbox({
      seed: SEED,
      fleet: { accounts: 8, billsPerAccount: 30 },
      accountEvolution: "manual",
      accountEndpoint: "public",
    });
    try {
      const env = { ...base, EXCHANGE_BASE_URL: publicOnly.url, ...keyEnv("P", 7) };
      const r = await runCli(["accounts", "add", "public-form", "--coins", "2", "--from-env", "P"], {
        ...env,
        COIN_NAMES: "2=USDT",
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`account public-form added (UID ${fleetUid(SEED, 7)})`);
      // The public form asks by coin name: without COIN_NAMES the error says what to set.
      const unnamed = await runCli(["accounts", "add", "public-unnamed", "--coins", "2", "--from-env", "P"], env);
      expect(unnamed.code).toBe(1);
      expect(unnamed.stderr).toContain("set COIN_NAMES (e.g. 2=USDT)");
    } finally {
      await query("DELETE FROM accounts WHERE name = 'public-form'");
      await publicOnly.close();
    }
  });

  it("a key the exchange refuses is not stored", async () => {
    const r = await runCli(["accounts", "add", "bad", "--coins", "2", "--from-env", "B"], {
      ...base,
      B_API_KEY: "no-such-key",
      B_API_SECRET: "s",
      B_API_PASSPHRASE: "p",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/account "bad": the key does not work, nothing stored/);
    expect(await query("SELECT name FROM accounts WHERE name = 'bad'")).toEqual([]);
  });

  it("never takes credentials from the command line, and needs the master key", async () => {
    const noTty = await runCli(["accounts", "add", "gamma", "--coins", "2"], base);
    expect(noTty.code).toBe(2);
    expect(noTty.stderr).toMatch(/--from-env PREFIX/);
    const { LEDGER_SYNC_MASTER_KEY: _omit, ...withoutKey } = base;
    const noKey = await runCli(["accounts", "add", "gamma", "--coins", "2", "--from-env", "G"], {
      ...withoutKey,
      ...keyEnv("G", 2),
    });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/LEDGER_SYNC_MASTER_KEY \(or LEDGER_SYNC_MASTER_KEY_FILE\) is required/);
  });

  it("import is all or nothing, names the bad line, and is idempotent", async () => {
    const file = join(tmpdir(), `accounts-${process.pid}.yaml`);
    const entry = (name: string, i: number) =>
      `  - name: ${name}\n    coinIds: [2]\n    apiKeyEnv: K${i}_API_KEY\n    apiSecretEnv: K${i}_API_SECRET\n    passphraseEnv: K${i}_API_PASSPHRASE\n`;
    writeFileSync(file, `accounts:\n${entry("i3", 3)}${entry("i4", 4)}${entry("i5", 5)}`);
    const env = { ...base, ...keyEnv("K3", 3), ...keyEnv("K4", 4), ...keyEnv("K5", 5) };
    const { K4_API_SECRET: _gone, ...missingOne } = env;
    const bad = await runCli(["accounts", "import", file], missingOne);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(new RegExp(`${file}:7: account "i4": environment variable K4_API_SECRET`));
    expect(bad.stderr).toContain("nothing imported");
    expect(await query("SELECT name FROM accounts WHERE name LIKE 'i%'")).toEqual([]);

    const ok = await runCli(["accounts", "import", file], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("3 added, 0 updated, 0 unchanged");
    const again = await runCli(["accounts", "import", file], env);
    expect(again.stdout).toContain("0 added, 0 updated, 3 unchanged");
  });

  it("list --json prints one object per account, failing (never synced) first; show, disable, enable", async () => {
    const list = await runCli(["accounts", "list", "--json"], base);
    expect(list.code, list.stderr).toBe(0);
    const rows = list.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r.name).sort()).toEqual(["alpha", "i3", "i4", "i5"]);
    expect(rows[0]).toMatchObject({
      status: "active",
      coins: ["2"],
      lastSuccess: null,
      lagSeconds: null,
      failing: true,
    });
    expect(JSON.stringify(rows)).not.toMatch(/fleet-secret|fleet-pass/);
    expect((await runCli(["accounts", "disable", "i5"], base)).code).toBe(0);
    const show = await runCli(["accounts", "show", "i5"], base);
    expect(JSON.parse(show.stdout)).toMatchObject({ name: "i5", status: "disabled", uid: fleetUid(SEED, 5) });
    const page = await runCli(["accounts", "list", "--json", "--status", "disabled"], base);
    expect(page.stdout.trim().split("\n")).toHaveLength(1);
    expect((await runCli(["accounts", "enable", "i5"], base)).code).toBe(0);
    const unknown = await runCli(["accounts", "disable", "nobody"], base);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('account "nobody" is not registered');
  });

  it("rotate proves the new key and refuses a key of another exchange account", async () => {
    const other = await runCli(["accounts", "rotate", "alpha", "--from-env", "R"], { ...base, ...keyEnv("R", 6) });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(
      `the new key belongs to UID ${fleetUid(SEED, 6)}, but account "alpha" is UID ${fleetUid(SEED, 0)}`,
    );
    const same = await runCli(["accounts", "rotate", "alpha", "--from-env", "R"], { ...base, ...keyEnv("R", 0) });
    expect(same.code, same.stderr).toBe(0);
    expect(await query("SELECT credentials_version AS v FROM accounts WHERE name = 'alpha'")).toEqual([{ v: 2 }]);
  });

  it("sync --once --account takes a registered account: every bill of that exchange account", async () => {
    const r = await runCli(["sync", "--once", "--account", "i3"], base);
    expect(r.code, r.stderr).toBe(0);
    const db = createDb(database.url);
    try {
      expect(await storedBills(db, "i3")).toEqual(asRows(sandbox.fleet!.bills(3)));
    } finally {
      await db.$disconnect();
    }
  });

  it("a wrong master key is one line naming the variable (exit 2); a tampered row is refused by name", async () => {
    const wrong = await runCli(["sync", "--once", "--account", "i3"], {
      ...base,
      LEDGER_SYNC_MASTER_KEY: generateMasterKeyHex(),
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.trim().split("\n")).toHaveLength(1);
    expect(wrong.stderr).toMatch(
      /account "[a-z0-9]+" is sealed under master key id [0-9a-f]{16}; LEDGER_SYNC_MASTER_KEY gives key id/,
    );
    await query(
      "UPDATE accounts SET sealed_credentials = set_byte(sealed_credentials, 20, get_byte(sealed_credentials, 20) # 1) WHERE name = 'i4'",
    );
    const tampered = await runCli(["sync", "--once", "--account", "i4"], base);
    expect(tampered.code).toBe(2);
    expect(tampered.stderr).toMatch(/account "i4": sealed credentials fail authentication: tampered or corrupted/);
  });

  it("no secret in a pg_dump, and the read-only role cannot select the sealed columns", async () => {
    const dump = await dumpText(database.url);
    expect(dump).toMatch(/COPY public.accounts|-- accounts/);
    for (const i of [0, 3, 4, 5]) {
      const c = fleetCredentials(SEED, i);
      for (const secret of [c.apiKey, c.apiSecret, c.passphrase]) expect(dump).not.toContain(secret);
    }
    const role = `ls_ro_${process.pid}`;
    const g = await runCli(["grant-readonly", role], base);
    expect(g.code, g.stderr).toBe(0);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query(`SET ROLE ${role}`);
      expect((await admin.query("SELECT name, uid FROM accounts ORDER BY name")).rows.length).toBe(4);
      await expect(admin.query("SELECT sealed_credentials FROM accounts")).rejects.toThrow(/permission denied/);
      await expect(admin.query("SELECT wrapped_key FROM accounts")).rejects.toThrow(/permission denied/);
    } finally {
      await admin.query("RESET ROLE");
      await admin.query(`DROP OWNED BY ${role}`);
      await admin.query(`DROP ROLE ${role}`);
      await admin.end();
    }
  });

  it("rekey re-wraps every account under the new master key; the old key no longer opens them", async () => {
    await query("DELETE FROM accounts WHERE name = 'i4'"); // the tampered row: rotate would replace it
    const next = generateMasterKeyHex();
    const r = await runCli(["accounts", "rekey"], { ...base, LEDGER_SYNC_NEW_MASTER_KEY: next });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^3 account\(s\) re-wrapped from master key [0-9a-f]{16} to [0-9a-f]{16}/);
    const old = await runCli(["sync", "--once", "--account", "i3"], base);
    expect(old.code).toBe(2);
    const fresh = await runCli(["sync", "--once", "--account", "i3"], { ...base, LEDGER_SYNC_MASTER_KEY: next });
    expect(fresh.code, fresh.stderr).toBe(0);
  });

  it("remove unregisters the account and keeps its books", async () => {
    const before = await query<{ n: number }>("SELECT count(*)::int AS n FROM bills WHERE account_name = 'i3'");
    const r = await runCli(["accounts", "remove", "i3"], base);
    expect(r.code, r.stderr).toBe(0);
    expect(await query("SELECT name FROM accounts WHERE name = 'i3'")).toEqual([]);
    expect(await query("SELECT count(*)::int AS n FROM bills WHERE account_name = 'i3'")).toEqual(before);
    expect(before[0]!.n).toBeGreaterThan(0);
  });

  it("remove --delete-books deletes one account's books for good, with its name confirmed", async () => {
    const unconfirmed = await runCli(["accounts", "remove", "i3", "--delete-books"], base);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("confirm with --confirm i3");
    const others = await query<{ n: number }>("SELECT count(*)::int AS n FROM bills WHERE account_name <> 'i3'");
    // The audit trail refuses a delete that is not this purge.
    await expect(query("DELETE FROM bills WHERE account_name = 'i3'")).rejects.toThrow(/bills are never deleted/);
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT set_config('ledger_sync.purge_account', 'other', true)");
      await expect(other.query("DELETE FROM bills WHERE account_name = 'i3'")).rejects.toThrow(
        /bills are never deleted/,
      );
      await other.query("ROLLBACK");
    } finally {
      await other.end();
    }
    // i3 is no longer registered (the test above), its books are: they can still be deleted.
    const r = await runCli(["accounts", "remove", "i3", "--delete-books", "--confirm", "i3"], base);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/account i3 removed with its books: deleted .*bills \d+/);
    for (const table of ["bills", "sync_state", "sync_runs", "daily_rollups", "verify_state"])
      expect(await query(`SELECT 1 FROM ${table} WHERE account_name = 'i3'`)).toEqual([]);
    expect(await query("SELECT count(*)::int AS n FROM bills WHERE account_name <> 'i3'")).toEqual(others);
    const again = await runCli(["accounts", "remove", "i3", "--delete-books", "--confirm", "i3"], base);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('account "i3" is not registered');
  });
});
