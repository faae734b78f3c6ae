// The runner and Prisma's own engine (its WebAssembly build, the engine of `prisma migrate deploy`
// and `prisma migrate status`, driven by scripts/schema-engine) take each other's history as
// their own: the same table, the same rows, the same schema, in either order and mixed, and each
// sees an edit of a migration the other applied.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineDeploy, engineStatus } from "../../../scripts/schema-engine/index.ts";
import { migrateDeploy, migrationStatus } from "../../../src/store/migrate/index.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { committedMigrations, historyRows, query, scratchMigrations } from "./helpers.ts";

/** The catalog's own description of every object of the public schema, one line each, sorted. */
async function schemaOf(url: string): Promise<string[]> {
  const rows = await query<{ line: string }>(
    url,
    `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || coalesce('(' || character_maximum_length || ')', '')
            || coalesce(' ' || numeric_precision || ',' || numeric_scale, '') || ' null=' || is_nullable
            || coalesce(' default ' || column_default, '') AS line
       FROM information_schema.columns WHERE table_schema = 'public'
     UNION ALL
     SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
       FROM pg_constraint WHERE connamespace = 'public'::regnamespace
     UNION ALL
     SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
     UNION ALL
     SELECT 'view ' || viewname || ' ' || definition FROM pg_views WHERE schemaname = 'public'
     UNION ALL
     SELECT 'function ' || pg_get_functiondef(p.oid) FROM pg_proc p WHERE pronamespace = 'public'::regnamespace
     UNION ALL
     SELECT 'trigger ' || pg_get_triggerdef(t.oid) FROM pg_trigger t
       JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal`,
  );
  return rows.map((row) => row.line).sort();
}

/** A row as `prisma migrate` reads it: what differs between two deploys (ids, times) left out. */
async function rowsAsTheCliReads(url: string) {
  return (await historyRows(url)).map((row) => ({
    migration_name: row.migration_name,
    checksum: row.checksum,
    applied_steps_count: row.applied_steps_count,
    logs: row.logs,
    finished: row.finished_at !== null && row.finished_at >= row.started_at,
    rolled_back: row.rolled_back_at !== null,
    id: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(row.id),
  }));
}

describe("the runner and Prisma's engine", () => {
  let byRunner: TestDatabase;
  let byEngine: TestDatabase;
  let names: string[];

  beforeAll(async () => {
    names = await committedMigrations();
    byRunner = await createTestDatabase("ls_compat_runner");
    byEngine = await createTestDatabase("ls_compat_engine");
    await migrateDeploy(byRunner.url);
    await engineDeploy(byEngine.url);
  });
  afterAll(async () => {
    await byRunner?.drop();
    await byEngine?.drop();
  });

  it("build the same _prisma_migrations table and write the same rows", async () => {
    const table = (url: string) =>
      query(
        url,
        `SELECT column_name, data_type, character_maximum_length, is_nullable, column_default, ordinal_position
           FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
      );
    expect(await table(byRunner.url)).toEqual(await table(byEngine.url));
    const primaryKey = (url: string) =>
      query(
        url,
        "SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = '_prisma_migrations'::regclass",
      );
    expect(await primaryKey(byRunner.url)).toEqual(await primaryKey(byEngine.url));

    const runnerRows = await rowsAsTheCliReads(byRunner.url);
    expect(runnerRows).toEqual(await rowsAsTheCliReads(byEngine.url));
    expect(runnerRows.map((row) => row.migration_name)).toEqual(names);
    expect(runnerRows.every((row) => row.finished && !row.rolled_back && row.id && row.applied_steps_count === 1)).toBe(
      true,
    );
  });

  it("build the same schema", async () => {
    const schema = await schemaOf(byRunner.url);
    expect(schema.length).toBeGreaterThan(100);
    expect(schema).toEqual(await schemaOf(byEngine.url));
  });

  it("each take the other's deploy as their own: nothing pending, nothing wrong, a deploy does nothing", async () => {
    expect(await engineStatus(byRunner.url)).toEqual({ applied: names, pending: [], problems: [] });
    expect(await migrationStatus(byEngine.url)).toEqual({ applied: names, pending: [], problems: [] });
    expect((await engineDeploy(byRunner.url)).applied).toEqual([]);
    expect((await migrateDeploy(byEngine.url)).applied).toEqual([]);
    expect((await historyRows(byRunner.url)).length).toBe(names.length);
    expect((await historyRows(byEngine.url)).length).toBe(names.length);
  });

  it("carry on where the other stopped, in either order", async () => {
    const firstHalf = await scratchMigrations(Math.ceil(names.length / 2));
    const engineThenRunner = await createTestDatabase("ls_compat_mixed");
    const runnerThenEngine = await createTestDatabase("ls_compat_mixed");
    try {
      const half = await committedMigrations(firstHalf.dir);
      expect((await engineDeploy(engineThenRunner.url, { migrationsDir: firstHalf.dir })).applied).toEqual(half);
      expect((await migrateDeploy(engineThenRunner.url)).applied).toEqual(names.slice(half.length));
      expect(await engineStatus(engineThenRunner.url)).toEqual({ applied: names, pending: [], problems: [] });

      expect((await migrateDeploy(runnerThenEngine.url, { migrationsDir: firstHalf.dir })).applied).toEqual(half);
      expect((await engineDeploy(runnerThenEngine.url)).applied).toEqual(names.slice(half.length));
      expect(await migrationStatus(runnerThenEngine.url)).toEqual({ applied: names, pending: [], problems: [] });

      expect(await schemaOf(engineThenRunner.url)).toEqual(await schemaOf(runnerThenEngine.url));
    } finally {
      await firstHalf.remove();
      await engineThenRunner.drop();
      await runnerThenEngine.drop();
    }
  });

  it("each see an edit of a migration the other applied", async () => {
    const edited = await scratchMigrations();
    try {
      const file = join(edited.dir, names[0]!, "migration.sql");
      await writeFile(file, `${await readFile(file, "utf8")}-- edited\n`);
      const problem = `migration ${names[0]} was edited after it was applied (checksum differs from the database)`;
      expect((await engineStatus(byRunner.url, { migrationsDir: edited.dir })).problems).toEqual([problem]);
      expect((await migrationStatus(byEngine.url, { migrationsDir: edited.dir })).problems).toEqual([problem]);
    } finally {
      await edited.remove();
    }
  });
});
