// `ledger-sync migrate` and `migrate --status` as users run them: the real executable, exit codes,
// and a process that ends as soon as its work is done.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { runCli } from "../support/cli.ts";
import { committedMigrations } from "../store/migrate/helpers.ts";

describe("ledger-sync migrate", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase("ls_migcli");
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("--status lists what is pending and exits 1 before a deploy", async () => {
    const names = await committedMigrations();
    const run = await runCli(["migrate", "--status"], { DATABASE_URL: db.url });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`applied: 0\npending: ${names.join(", ")}\n`);
    expect(run.stderr).toContain("the database is not up to date with prisma/migrations");
  });

  it("applies every migration, then does nothing, and exits at once", async () => {
    const names = await committedMigrations();
    const started = Date.now();
    const first = await runCli(["migrate"], { DATABASE_URL: db.url });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`applied ${names.length} migration(s): ${names.join(", ")}\n`);
    const second = await runCli(["migrate"], { DATABASE_URL: db.url });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(`database is up to date (${names.length} migrations already applied)\n`);
    // Nothing left running (no timer, no open connection) holds either process open.
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("--status says up to date and exits 0 after a deploy", async () => {
    const run = await runCli(["migrate", "--status"], { DATABASE_URL: db.url });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`applied: ${(await committedMigrations()).length}\npending: none\n`);
  });

  it("says which database it cannot reach, without the password, and exits 1", async () => {
    const run = await runCli(["migrate"], { DATABASE_URL: "postgresql://u:Pw0rd@127.0.0.1:1/nowhere" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("cannot connect to DATABASE_URL 127.0.0.1:1/nowhere");
    expect(run.stderr).not.toContain("Pw0rd");
  });
});
