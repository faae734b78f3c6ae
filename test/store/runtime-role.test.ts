// Least privilege as a managed service hands it out: the database belongs to a plain role (no
// superuser, no CREATEDB, no CREATEROLE) that migrates. As that owner, grant-runtime and
// grant-readonly name CREATEROLE when a role is missing or a password is asked for, and change
// nothing; for a role an admin created, they grant with ownership alone. The runtime role then syncs
// and verifies, and cannot drop, truncate, alter or disable a trigger on the books; tables,
// sequences and functions a later migration adds are covered without running grant-runtime again.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const tag = randomBytes(3).toString("hex");
const OWNER = `ls_owner_${tag}`;
const RUNTIME = `ls_runtime_${tag}`;
const READER = `ls_reader_${tag}`;
const MISSING = `ls_missing_${tag}`;
const PASSWORD = `pw-${tag}-7f3a`;

let database: TestDatabase;
let sandbox: Sandbox;
let ownerUrl: string;
let runtimeUrl: string;

function urlAs(user: string, dbUrl: string): string {
  const u = new URL(dbUrl);
  u.username = user;
  u.password = PASSWORD;
  return u.toString();
}

async function as<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const admin = <T>(fn: (c: pg.Client) => Promise<T>) => as(inject("adminDatabaseUrl"), fn);

beforeAll(async () => {
  database = await createTestDatabase();
  await admin(async (c) => {
    await c.query(`CREATE ROLE ${OWNER} NOSUPERUSER NOCREATEDB NOCREATEROLE LOGIN PASSWORD '${PASSWORD}'`);
    await c.query(`ALTER DATABASE "${database.name}" OWNER TO ${OWNER}`);
  });
  // PostgreSQL 15+: schema public belongs to the database owner; older servers need it said.
  await as(database.url, (c) => c.query(`ALTER SCHEMA public OWNER TO ${OWNER}`));
  ownerUrl = urlAs(OWNER, database.url);
  runtimeUrl = urlAs(RUNTIME, database.url);
  sandbox = await startSandbox({ seed: 33, billCount: 600, accountEvolution: "manual" });
  const migrated = await runCli(["migrate"], { DATABASE_URL: ownerUrl });
  expect(migrated.code, migrated.stderr).toBe(0);
});

afterAll(async () => {
  await sandbox?.close();
  const roles = [RUNTIME, READER, MISSING];
  if (database) {
    await as(database.url, async (c) => {
      for (const role of roles) await c.query(`DROP OWNED BY ${role}`).catch(() => undefined);
    });
    await database.drop();
  }
  await admin(async (c) => {
    for (const role of [...roles, OWNER]) await c.query(`DROP ROLE IF EXISTS ${role}`);
  });
});

const grantCli = (command: string, role: string, env: Record<string, string> = {}, args: string[] = []) =>
  runCli([command, role, ...args], { DATABASE_URL: ownerUrl, ...env });

const privileges = (role: string) =>
  as(database.url, async (c) => {
    const r = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM information_schema.role_table_grants WHERE grantee = $1`,
      [role],
    );
    return r.rows[0]!.n;
  });

describe.each(["grant-runtime", "grant-readonly"])("%s as a schema owner without CREATEROLE", (command) => {
  it("names CREATEROLE for a missing role and what to ask for, and creates nothing", async () => {
    const r = await grantCli(command, MISSING);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`role ${MISSING} does not exist, and creating it needs the CREATEROLE privilege`);
    expect(r.stderr).toContain(`which ${OWNER} does not have`);
    expect(r.stderr).toContain(`\`CREATE ROLE ${MISSING} LOGIN PASSWORD '…'\``);
    expect(r.stderr).toContain(`\`ledger-sync ${command} ${MISSING}\` again`);
    const exists = await admin((c) => c.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [MISSING]));
    expect(exists.rowCount).toBe(0);
  });

  it("names CREATEROLE for a password, and grants nothing", async () => {
    await admin((c) => c.query(`CREATE ROLE ${MISSING} LOGIN PASSWORD '${PASSWORD}'`));
    try {
      const r = await grantCli(command, MISSING, { ROLE_PW: "another-secret-value" }, ["--password-env", "ROLE_PW"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`setting the password of role ${MISSING} needs the CREATEROLE privilege`);
      expect(r.stdout + r.stderr).not.toContain("another-secret-value");
      expect(await privileges(MISSING)).toBe(0);
    } finally {
      await admin((c) => c.query(`DROP ROLE ${MISSING}`));
    }
  });
});

describe("grant-runtime's role name", () => {
  it("refuses a name that is not a plain identifier in one line, exit 2, before connecting", async () => {
    const r = await runCli(["grant-runtime", "Robert'); DROP TABLE bills;--"], {
      DATABASE_URL: "postgresql://nobody@127.0.0.1:1/none",
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/role name .* must be 1-63 lower-case letters/);
  });
});

describe("grant-readonly by the plain owner, for a role an admin created", () => {
  it("grants SELECT and nothing else, sealed credentials excepted", async () => {
    await admin((c) => c.query(`CREATE ROLE ${READER} LOGIN PASSWORD '${PASSWORD}'`));
    const r = await grantCli("grant-readonly", READER);
    expect(r.code, r.stderr).toBe(0);
    await as(urlAs(READER, database.url), async (c) => {
      expect((await c.query("SELECT count(*)::int AS n FROM bills")).rows[0].n).toBeGreaterThanOrEqual(0);
      expect((await c.query("SELECT name FROM accounts")).rowCount).toBe(0);
      await expect(c.query("SELECT sealed_credentials FROM accounts")).rejects.toThrow(/permission denied/);
      await expect(
        c.query("INSERT INTO sync_state (account_name, stream, cursor_ms) VALUES ('x', 'y', 1)"),
      ).rejects.toThrow(/permission denied/);
    });
  });
});

describe("grant-runtime by the plain owner, for a role an admin created", () => {
  beforeAll(async () => {
    await admin((c) => c.query(`CREATE ROLE ${RUNTIME} LOGIN PASSWORD '${PASSWORD}'`));
    const r = await grantCli("grant-runtime", RUNTIME);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^role ${RUNTIME}: SELECT on every table, INSERT and UPDATE on all but`));
  });

  it("syncs an account against the exchange and verifies it", async () => {
    const env = {
      DATABASE_URL: runtimeUrl,
      ...sandboxExchangeEnv(sandbox.url),
      ACCOUNT_NAME: "runtime",
      BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
      SYNC_COIN_IDS: "2",
      SNAPSHOT_HISTORY_RETENTION_DAYS: "1",
      SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS: "1",
    };
    const synced = await runCli(["sync", "--once"], env);
    expect(synced.code, synced.stderr).toBe(0);
    expect(synced.stdout).toMatch(/new 600, revised 0, quarantined 0/);
    const verified = await runCli(["verify", "--account", "runtime"], env);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    const bills = await as(database.url, (c) => c.query("SELECT count(*)::int AS n FROM bills"));
    expect(bills.rows[0].n).toBe(600);
  });

  it("run by a role that does not own the tables, names them and their owner, and grants nothing", async () => {
    const r = await runCli(["grant-readonly", READER], { DATABASE_URL: runtimeUrl });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`${RUNTIME} does not own _prisma_migrations, .*bills.* \\(they belong to ${OWNER}\\)`),
    );
    expect(r.stderr).toContain("with the DATABASE_URL that runs migrate");
    const self = await grantCli("grant-runtime", OWNER);
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/is a superuser or owns the schema's tables: grants cannot restrict it/);
  });

  it("cannot drop, truncate, alter or disable a trigger on the books, nor delete them", async () => {
    await as(runtimeUrl, async (c) => {
      for (const table of ["bill_rows", "bill_revisions", "period_closes", "sync_runs"]) {
        for (const sql of [
          `ALTER TABLE ${table} DISABLE TRIGGER ALL`,
          `ALTER TABLE ${table} DISABLE TRIGGER USER`,
          `DROP TABLE ${table}`,
          `TRUNCATE ${table}`,
          `ALTER TABLE ${table} ADD COLUMN evil int`,
          `ALTER TABLE ${table} OWNER TO ${RUNTIME}`,
          `DELETE FROM ${table}`,
        ])
          await expect(c.query(sql), sql).rejects.toThrow(/must be owner of table|permission denied/);
      }
      // The bills view: not dropped, not altered, not deleted from; nor a month's partition.
      await expect(c.query("DROP VIEW bills")).rejects.toThrow(/must be owner of view/);
      await expect(c.query("DELETE FROM bills")).rejects.toThrow(/permission denied/);
      const [month] = (await c.query<{ p: string }>("SELECT inhrelid::regclass::text AS p FROM pg_inherits LIMIT 1"))
        .rows;
      for (const sql of [`DELETE FROM ${month!.p}`, `TRUNCATE ${month!.p}`, `DROP TABLE ${month!.p}`])
        await expect(c.query(sql), sql).rejects.toThrow(/must be owner of table|permission denied/);
      await expect(c.query("CREATE TABLE evil (x int)")).rejects.toThrow(/permission denied/);
      await expect(c.query("CREATE TRIGGER evil BEFORE INSERT ON bills EXECUTE FUNCTION now()")).rejects.toThrow(
        /must be owner|permission denied/,
      );
      await expect(
        c.query("INSERT INTO _prisma_migrations (id, checksum, migration_name) VALUES ('x', 'x', 'x')"),
      ).rejects.toThrow(/permission denied/);
      await expect(c.query("SELECT setval('run_lease_tokens', 1)")).rejects.toThrow(/permission denied/);
      await expect(c.query("UPDATE daily_rollups SET bills = 0")).rejects.toThrow(/cannot update view/);
      await expect(c.query("UPDATE rollup_rows SET bills = 0")).rejects.toThrow(/permission denied/);
      // The fleet view's run figures: written only by sync_runs' trigger, which runs as the owner.
      await expect(c.query("UPDATE bills_run_stats SET pages = '{0}'")).rejects.toThrow(/permission denied/);
      await c.query(
        `INSERT INTO sync_runs (account_name, stream, started_at, finished_at, outcome, pages)
         VALUES ('runtime-finished', 'bills', now(), now(), 'ok', 2)`,
      );
      expect((await c.query("SELECT pages FROM bills_run_stats WHERE account_name = 'runtime-finished'")).rows).toEqual(
        [{ pages: [2] }],
      );
      // What the worker must do: open the sealed credentials, prune snapshot history.
      await c.query("SELECT wrapped_key, sealed_credentials FROM accounts");
      await c.query("DELETE FROM account_snapshots WHERE false");
    });
    const bills = await as(database.url, (c) => c.query("SELECT count(*)::int AS n FROM bills"));
    expect(bills.rows[0].n).toBe(600);
  });

  it("covers a table, sequence and function a later migration adds, with no DELETE or TRUNCATE", async () => {
    await as(ownerUrl, (c) =>
      c.query(`CREATE SEQUENCE later_ids;
               CREATE TABLE later_rows (id bigint PRIMARY KEY DEFAULT nextval('later_ids'), v int);
               CREATE FUNCTION later_fn() RETURNS int LANGUAGE sql AS 'SELECT 1';
               REVOKE EXECUTE ON FUNCTION later_fn() FROM PUBLIC`),
    );
    await as(runtimeUrl, async (c) => {
      await c.query("INSERT INTO later_rows (v) VALUES (1)");
      await c.query("UPDATE later_rows SET v = 2");
      expect((await c.query("SELECT v, later_fn() AS f FROM later_rows")).rows).toEqual([{ v: 2, f: 1 }]);
      await expect(c.query("DELETE FROM later_rows")).rejects.toThrow(/permission denied/);
      await expect(c.query("TRUNCATE later_rows")).rejects.toThrow(/permission denied/);
      await expect(c.query("ALTER TABLE later_rows DISABLE TRIGGER ALL")).rejects.toThrow(/must be owner/);
    });
  });
});
