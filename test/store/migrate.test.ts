// The offline `prisma migrate` (WebAssembly schema engine through adapter-pg), against real
// PostgreSQL: no mocks.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { diffMigrationsToSchema, migrateDeploy, migrationStatus } from "../../src/store/migrate/index.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const migrationsDir = join(repo, "prisma/migrations");
const schemaPath = join(repo, "prisma/schema.prisma");

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

async function committedMigrations(): Promise<string[]> {
  const entries = await readdir(migrationsDir, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/** A port on which nothing listens. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function shadowDatabases(url: string): Promise<{ datname: string }[]> {
  return query(url, "SELECT datname FROM pg_database WHERE datname LIKE 'prisma_migrate_shadow_db_%'");
}

describe("migrations of prisma/schema.prisma", () => {
  let db: TestDatabase;
  let names: string[];

  beforeAll(async () => {
    db = await createTestDatabase("ls_migrate");
    names = await committedMigrations();
    expect(names.length).toBeGreaterThanOrEqual(2);
    expect(names[0]).toMatch(/^\d{14}_init$/);
    expect(names[1]).toMatch(/^\d{14}_snapshots$/);
    expect(names[2]).toMatch(/^\d{14}_bi_views$/);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("reports every migration as pending on an empty database", async () => {
    const status = await migrationStatus(db.url);
    expect(status).toEqual({ applied: [], pending: names, problems: [] });
  });

  it("deploys onto an empty database and records it as the Prisma CLI does", async () => {
    const messages: string[] = [];
    const result = await migrateDeploy(db.url, { log: (m) => messages.push(m) });
    expect(result).toEqual({ applied: names, alreadyApplied: 0 });
    for (const name of names) expect(messages.join("\n")).toContain(name);

    const tables = await query<{ table_name: string }>(
      db.url,
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name",
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      "_prisma_migrations",
      "account_snapshots",
      "bill_revisions",
      "bills",
      "collateral_current",
      "collateral_history",
      "exchange_profiles",
      "fee_settings",
      "leverage_settings",
      "mode_settings",
      "position_history",
      "positions_current",
      "quarantine",
      "sync_runs",
      "sync_state",
      "verify_state",
    ]);
    const views = await query<{ table_name: string }>(
      db.url,
      "SELECT table_name FROM information_schema.views WHERE table_schema = 'public' ORDER BY table_name",
    );
    expect(views.map((v) => v.table_name)).toEqual([
      "v_balances",
      "v_daily_pnl",
      "v_fees",
      "v_funding",
      "v_positions_open",
      "v_transfers",
    ]);

    // Decimal @db.Decimal must be unconstrained NUMERIC: a precision/scale would round and pad.
    const numerics = await query<{
      table_name: string;
      column_name: string;
      numeric_precision: number | null;
      numeric_scale: number | null;
    }>(
      db.url,
      `SELECT table_name, column_name, numeric_precision, numeric_scale FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type = 'numeric' ORDER BY table_name, column_name`,
    );
    // Every amount is unconstrained; only the match sequence ids are NUMERIC(39,0) (whole numbers).
    expect(numerics.length).toBeGreaterThan(50);
    for (const n of numerics) {
      const sequence = n.column_name.endsWith("_match_sequence_id");
      expect(n, `${n.table_name}.${n.column_name}`).toMatchObject(
        sequence ? { numeric_precision: 39, numeric_scale: 0 } : { numeric_precision: null, numeric_scale: null },
      );
    }
    expect(
      numerics
        .filter((n) => ["bills", "bill_revisions"].includes(n.table_name))
        .map((n) => n.column_name)
        .sort(),
    ).toEqual(["amount", "amount", "balance", "balance", "fill_fee", "fill_fee"]);

    const rows = await query<{
      id: string;
      checksum: string;
      migration_name: string;
      finished_at: Date | null;
      started_at: Date;
      rolled_back_at: Date | null;
      logs: string | null;
      applied_steps_count: number;
    }>(db.url, "SELECT * FROM _prisma_migrations ORDER BY migration_name");
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const sql = await readFile(join(migrationsDir, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(sql).digest("hex"));
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it("is a no-op the second time", async () => {
    const before = await query(db.url, "SELECT id, finished_at FROM _prisma_migrations");
    expect(await migrateDeploy(db.url)).toEqual({ applied: [], alreadyApplied: names.length });
    expect(await query(db.url, "SELECT id, finished_at FROM _prisma_migrations")).toEqual(before);
  });

  it("reports nothing pending once deployed", async () => {
    expect(await migrationStatus(db.url)).toEqual({ applied: names, pending: [], problems: [] });
  });

  it("enforces digits-only bill ids with a CHECK constraint", async () => {
    const insert = `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
                    VALUES ('acct', $1, 'USDT', 'BTCUSDT', 'trade', 1, 2, 0, now(), 0, '{}')`;
    await query(db.url, insert, ["686960019383517338"]);
    await expect(query(db.url, insert, ["12a"])).rejects.toMatchObject({
      code: "23514",
      constraint: "bills_bill_id_digits",
    });
    const revision = `INSERT INTO bill_revisions (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw, first_seen_at)
                      VALUES ('acct', $1, 'USDT', 'BTCUSDT', 'trade', 1, 2, 0, now(), 0, '{}', now())`;
    await expect(query(db.url, revision, ["-1"])).rejects.toMatchObject({
      code: "23514",
      constraint: "bill_revisions_bill_id_digits",
    });
  });

  it("keeps the exchange's decimal text exactly", async () => {
    const [row] = await query<{ amount: string }>(
      db.url,
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, raw)
       VALUES ('acct', '2', 'USDT', 'BTCUSDT', 'trade', '0.000000000000000000000000000000000001234567890123456789', 2, 0, now(), 0, '{}')
       RETURNING amount::text`,
    );
    expect(row!.amount).toBe("0.000000000000000000000000000000000001234567890123456789");
  });
});

describe("diffMigrationsToSchema", () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "ls-migrate-"));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it("finds nothing to do for the committed schema (CHECK constraints are not drift)", async () => {
    const db = await createTestDatabase("ls_diff");
    try {
      expect(await diffMigrationsToSchema(db.url, schemaPath)).toBe("");
      expect(await shadowDatabases(db.url)).toEqual([]);
    } finally {
      await db.drop();
    }
  });

  it("returns the SQL for a schema change", async () => {
    const changed = join(scratch, "schema.prisma");
    const schema = await readFile(schemaPath, "utf8");
    await writeFile(changed, schema.replace("model Bill {", 'model Bill {\n  note String? @map("note")'));
    const db = await createTestDatabase("ls_diff");
    try {
      const sql = await diffMigrationsToSchema(db.url, changed);
      expect(sql).toContain('ALTER TABLE "bills" ADD COLUMN     "note" TEXT;');
      expect(sql).not.toContain("bills_bill_id_digits");
      expect(await shadowDatabases(db.url)).toEqual([]);
    } finally {
      await db.drop();
    }
  });
});

describe("failures", () => {
  it("names host and port, not the password, when the server is unreachable", async () => {
    const port = await closedPort();
    const url = `postgresql://ledger:S3cret%2Fpw@127.0.0.1:${port}/ledger`;
    for (const run of [
      () => migrateDeploy(url),
      () => migrationStatus(url),
      () => diffMigrationsToSchema(url, schemaPath),
    ]) {
      const error = await run().then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).toContain(`cannot connect to DATABASE_URL 127.0.0.1:${port}/ledger`);
      expect(error!.message).toContain("ECONNREFUSED");
      const everything = `${error!.message}\n${error!.stack}\n${String((error!.cause as Error | undefined)?.message)}`;
      expect(everything).not.toContain("S3cret");
    }
  });

  it("names the failed migration and the database error; status then reports it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ls-migrations-"));
    const db = await createTestDatabase("ls_migfail");
    try {
      await cp(migrationsDir, dir, { recursive: true });
      // A function body has ";" inside: the script must reach Postgres whole.
      await mkdir(join(dir, "20990101000000_function"));
      await writeFile(
        join(dir, "20990101000000_function", "migration.sql"),
        "CREATE FUNCTION ls_one() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END; $$;\n",
      );
      await mkdir(join(dir, "20990102000000_broken"));
      await writeFile(
        join(dir, "20990102000000_broken", "migration.sql"),
        "CREATE TABLE ls_half (id int);\nSELECT no_such_column FROM bills;\n",
      );
      const error = await migrateDeploy(db.url, { migrationsDir: dir }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(/^migration 20990102000000_broken failed: column "no_such_column" does not exist/);
      expect(error?.message).toContain("line 2");

      expect(await query(db.url, "SELECT ls_one() AS one")).toEqual([{ one: 1 }]);
      // The failed script ran as one transaction: nothing of it is left.
      expect(await query(db.url, "SELECT to_regclass('ls_half') AS t")).toEqual([{ t: null }]);

      const status = await migrationStatus(db.url, { migrationsDir: dir });
      expect(status.applied).toEqual([...(await committedMigrations()), "20990101000000_function"]);
      expect(status.pending).toEqual([]);
      expect(status.problems).toHaveLength(1);
      expect(status.problems[0]).toContain("20990102000000_broken");
      expect(status.problems[0]).toContain("failed");

      await expect(migrateDeploy(db.url, { migrationsDir: dir })).rejects.toThrow(/failed migrations/);
    } finally {
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** Runs a TypeScript file with tsx in a child process; resolves with its output and run time. */
function runTsx(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", ...args], { cwd: repo, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

describe("process lifetime and the dev command", () => {
  it("lets the process exit right after a deploy (no engine timer, no open pool)", async () => {
    const db = await createTestDatabase("ls_exit");
    const dir = await mkdtemp(join(tmpdir(), "ls-exit-"));
    try {
      const script = join(dir, "deploy.mts");
      const index = join(repo, "src/store/migrate/index.ts");
      await writeFile(
        script,
        `import { migrateDeploy } from ${JSON.stringify(index)};\n` +
          `const result = await migrateDeploy(process.env.DATABASE_URL!);\n` +
          `console.log(JSON.stringify(result));\n` +
          `console.log("done", Date.now());\n`,
      );
      const run = await runTsx([script], { DATABASE_URL: db.url });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const [resultLine, doneLine] = run.stdout.trim().split("\n");
      expect(JSON.parse(resultLine!)).toEqual({ applied: await committedMigrations(), alreadyApplied: 0 });
      const doneAt = Number(doneLine!.split(" ")[1]);
      // The engine schedules a 10 s timer during applyMigrations.
      expect(Date.now() - doneAt).toBeLessThan(8000); // not the engine's 10 s timer
    } finally {
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("scripts/migration-new.ts prints 'no changes' and writes nothing when the schema matches", async () => {
    const before = await committedMigrations();
    const lock = await readFile(join(migrationsDir, "migration_lock.toml"), "utf8");
    const run = await runTsx(["scripts/migration-new.ts", "nothing"], { DATABASE_URL: inject("adminDatabaseUrl") });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe("no changes");
    expect(run.code).toBe(0);
    expect(await committedMigrations()).toEqual(before);
    expect(lock).toBe(
      '# Please do not edit this file manually\n# It should be added in your version-control system (e.g., Git)\nprovider = "postgresql"\n',
    );
  });
});
