// One run per account through the CLI: a second writer exits at once with code 5 (nothing done),
// or waits with --wait; two at once never write together (their sync_runs never overlap); a run
// left "running" by a dead process is marked interrupted by the next one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { createDb, type Db } from "../../src/store/prisma.ts";
import { acquireRunLease } from "../../src/store/lease-keeper.ts";
import { startRun } from "../../src/store/sync-runs.ts";
import { runCli } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";

let database: TestDatabase;
let sandbox: Sandbox;
let db: Db;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  sandbox = await startSandbox({ seed: 71, billCount: 3000, limits: null, accountEvolution: "manual" });
  env = {
    DATABASE_URL: database.url,
    ...sandboxExchangeEnv(sandbox.url),
    ACCOUNT_NAME: "locked",
    BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
  };
  const m = await runCli(["migrate"], env);
  expect(m.code, m.stderr).toBe(0);
  db = createDb(database.url);
});
afterAll(async () => {
  await db.$disconnect();
  await sandbox.close();
  await database.drop();
});

type RunRow = { started_at: Date; finished_at: Date | null; outcome: string };
const billRuns = () =>
  db.$queryRawUnsafe<RunRow[]>(
    "SELECT started_at, finished_at, outcome FROM sync_runs WHERE account_name = 'locked' AND stream = 'bills' ORDER BY started_at",
  );

describe("one run per account", () => {
  it("a second writer exits 5 at once and does nothing; with --wait it runs once the first is done", async () => {
    const held = await acquireRunLease({ connectionString: database.url }, "locked", ["bills"], {
      ttlMs: 30_000,
      what: "test",
    });
    try {
      const busy = await runCli(["sync", "--once"], env);
      expect(busy.code).toBe(5);
      expect(busy.stderr).toMatch(
        /account "locked" is being written by another process \(bills: .* test\).*pass --wait to wait for it/,
      );
      expect(await billRuns()).toEqual([]);

      const started = Date.now();
      const waiting = runCli(["sync", "--once", "--wait"], env);
      setTimeout(() => void held.release(), 1500);
      const r = await waiting;
      expect(r.code, r.stderr).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    } finally {
      await held.release();
    }
    expect((await billRuns()).map((x) => x.outcome)).toEqual(["ok"]);
  });

  it("two at once never write together: each exits 0 or 5, and their runs never overlap", async () => {
    sandbox.appendBill({ amount: "1" });
    const [a, b] = await Promise.all([runCli(["sync", "--once"], env), runCli(["sync", "--once", "--wait"], env)]);
    for (const r of [a, b]) expect([0, 5], r.stderr).toContain(r.code);
    expect(b.code, b.stderr).toBe(0);
    const runs = (await billRuns()).slice(1);
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.started_at.getTime()).toBeGreaterThanOrEqual(runs[i - 1]!.finished_at!.getTime());
  });

  it("a run left running by a process that died is marked interrupted by the next run", async () => {
    const dead = await startRun(db, { accountName: "locked", stream: "bills" });
    const r = await runCli(["sync", "--once"], env);
    expect(r.code, r.stderr).toBe(0);
    const row = await db.$queryRawUnsafe<{ outcome: string }[]>("SELECT outcome FROM sync_runs WHERE id = $1", dead);
    expect(row[0]!.outcome).toBe("interrupted");
  });
});
