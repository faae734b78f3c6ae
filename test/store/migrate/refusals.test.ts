// What the migration runner refuses or survives, each named: an unreachable server (never its
// password), a failing script (rolled back whole, nothing recorded), an applied migration edited
// afterwards, a failed migration another tool left, a bad migrations directory.
import { createServer } from "node:net";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { migrateDeploy, migrationStatus } from "../../../src/store/migrate/index.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { committedMigrations, historyRows, query, scratchMigrations, type ScratchMigrations } from "./helpers.ts";

/** A port on which nothing listens. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function failureOf(promise: Promise<unknown>): Promise<Error | undefined> {
  return promise.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
}

describe("migration runner refusals", () => {
  let db: TestDatabase;
  let scratch: ScratchMigrations;
  beforeEach(async () => {
    db = await createTestDatabase("ls_migref");
    scratch = await scratchMigrations();
  });
  afterEach(async () => {
    await db.drop();
    await scratch.remove();
  });

  it("names host and port, not the password, when the server is unreachable", async () => {
    const port = await closedPort();
    const url = `postgresql://ledger:S3cret%2Fpw@127.0.0.1:${port}/ledger`;
    for (const run of [() => migrateDeploy(url), () => migrationStatus(url)]) {
      const error = await failureOf(run());
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).toContain(`cannot connect to DATABASE_URL 127.0.0.1:${port}/ledger`);
      expect(error!.message).toContain("ECONNREFUSED");
      const everything = `${error!.message}\n${error!.stack}\n${String((error!.cause as Error | undefined)?.message)}`;
      expect(everything).not.toContain("S3cret");
    }
  });

  it("rolls a failing migration back whole, records nothing of it, and applies it once fixed", async () => {
    // A function body has ";" inside: the script must reach PostgreSQL whole.
    await scratch.add(
      "20990101000000_function",
      "CREATE FUNCTION ls_one() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END; $$;\n",
    );
    await scratch.add("20990102000000_broken", "CREATE TABLE ls_half (id int);\nSELECT no_such_column FROM bills;\n");
    await scratch.add("20990103000000_after", "CREATE TABLE ls_after (id int);\n");
    const error = await failureOf(migrateDeploy(db.url, { migrationsDir: scratch.dir }));
    expect(error?.message).toMatch(/^migration 20990102000000_broken failed: column "no_such_column" does not exist/);
    expect(error?.message).toContain("SQLSTATE 42703, line 2");

    expect(await query(db.url, "SELECT ls_one() AS one")).toEqual([{ one: 1 }]);
    expect(await query(db.url, "SELECT to_regclass('ls_half') AS t, to_regclass('ls_after') AS a")).toEqual([
      { t: null, a: null },
    ]);
    const recorded = (await historyRows(db.url)).map((row) => row.migration_name);
    expect(recorded).toEqual([...(await committedMigrations()), "20990101000000_function"]);

    const status = await migrationStatus(db.url, { migrationsDir: scratch.dir });
    expect(status.pending).toEqual(["20990102000000_broken", "20990103000000_after"]);
    expect(status.problems).toEqual([]);

    await scratch.add("20990102000000_broken", "CREATE TABLE ls_half (id int);\n");
    const fixed = await migrateDeploy(db.url, { migrationsDir: scratch.dir });
    expect(fixed.applied).toEqual(["20990102000000_broken", "20990103000000_after"]);
    expect(await query(db.url, "SELECT to_regclass('ls_half')::text AS t")).toEqual([{ t: "ls_half" }]);
  });

  it("refuses, by name, an applied migration whose migration.sql was edited, and applies nothing", async () => {
    await migrateDeploy(db.url, { migrationsDir: scratch.dir });
    const [first] = await committedMigrations(scratch.dir);
    const file = join(scratch.dir, first!, "migration.sql");
    await writeFile(file, `${await readFile(file, "utf8")}\n-- an afterthought\n`);
    await scratch.add("20990101000000_new", "CREATE TABLE ls_new (id int);\n");

    const error = await failureOf(migrateDeploy(db.url, { migrationsDir: scratch.dir }));
    expect(error?.message).toContain(`migration ${first} was edited after it was applied`);
    expect(await query(db.url, "SELECT to_regclass('ls_new') AS t")).toEqual([{ t: null }]);
    const status = await migrationStatus(db.url, { migrationsDir: scratch.dir });
    expect(status.problems).toEqual([
      `migration ${first} was edited after it was applied (checksum differs from the database)`,
    ]);
    expect(status.pending).toEqual(["20990101000000_new"]);
  });

  it("accepts a migration.sql whose line endings git rewrote", async () => {
    await migrateDeploy(db.url, { migrationsDir: scratch.dir });
    const names = await committedMigrations(scratch.dir);
    for (const name of names) {
      const file = join(scratch.dir, name, "migration.sql");
      await writeFile(file, (await readFile(file, "utf8")).replaceAll("\n", "\r\n"));
    }
    expect(await migrationStatus(db.url, { migrationsDir: scratch.dir })).toEqual({
      applied: names,
      pending: [],
      problems: [],
    });
    expect((await migrateDeploy(db.url, { migrationsDir: scratch.dir })).applied).toEqual([]);
  });

  it("refuses while another tool's failed migration is unresolved, and re-applies it once rolled back", async () => {
    const names = await committedMigrations(scratch.dir);
    const last = names[names.length - 1]!;
    await rm(join(scratch.dir, last), { recursive: true });
    await migrateDeploy(db.url, { migrationsDir: scratch.dir });
    // What Prisma's CLI leaves when a script fails: a row started, never finished.
    await query(
      db.url,
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, logs, started_at, applied_steps_count)
       VALUES (gen_random_uuid()::text, 'x', $1, 'error: it failed', now(), 0)`,
      [last],
    );
    const restored = await scratchMigrations();
    try {
      const error = await failureOf(migrateDeploy(db.url, { migrationsDir: restored.dir }));
      expect(error?.message).toContain(`migration ${last} failed: it is recorded as failed in _prisma_migrations`);
      expect(error?.message).toContain("prisma migrate resolve --rolled-back");
      expect((await migrationStatus(db.url, { migrationsDir: restored.dir })).problems).toHaveLength(1);

      await query(db.url, "UPDATE _prisma_migrations SET rolled_back_at = now() WHERE finished_at IS NULL");
      expect((await migrateDeploy(db.url, { migrationsDir: restored.dir })).applied).toEqual([last]);
      const rows = (await historyRows(db.url)).filter((row) => row.migration_name === last);
      expect(rows.map((row) => [row.rolled_back_at === null, row.finished_at === null])).toEqual([
        [false, true],
        [true, false],
      ]);
      expect(await migrationStatus(db.url, { migrationsDir: restored.dir })).toMatchObject({
        pending: [],
        problems: [],
      });
    } finally {
      await restored.remove();
    }
  });

  it("names a migration directory without migration.sql and a lockfile for another database", async () => {
    await scratch.add("20990101000000_fine", "SELECT 1;\n");
    await rm(join(scratch.dir, "20990101000000_fine", "migration.sql"));
    expect((await failureOf(migrateDeploy(db.url, { migrationsDir: scratch.dir })))?.message).toContain(
      "migration 20990101000000_fine has no readable migration.sql",
    );
    await rm(join(scratch.dir, "20990101000000_fine"), { recursive: true });
    await writeFile(join(scratch.dir, "migration_lock.toml"), 'provider = "mysql"\n');
    expect((await failureOf(migrateDeploy(db.url, { migrationsDir: scratch.dir })))?.message).toMatch(
      /migration_lock\.toml names provider "mysql": these migrations are not for PostgreSQL/,
    );
    expect(await query(db.url, "SELECT to_regclass('_prisma_migrations') AS t")).toEqual([{ t: null }]);
  });
});
