// @module-tag redis
// `ledger-sync demo` end to end, as a subprocess, on the test PostgreSQL and Redis (the embedded
// parts are what DATABASE_URL/REDIS_URL replace). Its summary must match the database.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let t: MigratedDb;
let r: TestRedis;
beforeAll(async () => {
  t = await createMigratedDb();
  r = await createTestRedis();
});
afterAll(async () => {
  await t.close();
  await r.cleanup();
});

describe("ledger-sync demo", () => {
  it("backfills the sandbox, syncs live bills, stops cleanly, and prints a summary that matches the database", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "ls-demo-")); // the demo keeps its sandbox anchor in ./.data
    const res = await runCli(
      ["demo", "--bills", "1500", "--for", "3"],
      { DATABASE_URL: t.url, REDIS_URL: r.url, QUEUE_PREFIX: r.prefix, BILLS_INTERVAL_MS: "1000" },
      180_000,
      cwd,
    );
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/history backfilled: \d+ windows, 1500 bills/);
    const m = /verify: sandbox truth (\d+) bills, database (\d+) bills: match/.exec(res.stdout);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThan(1500); // live bills arrived during --for
    const [{ n }] = (await t.db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM bills")) as [
      { n: number },
    ];
    expect(n).toBe(Number(m![1]));
    // Per-coin balances printed are the database's.
    const balances = await t.db.$queryRawUnsafe<{ coin: string; balance: string }[]>(
      "SELECT DISTINCT ON (coin) coin, balance::text FROM bills ORDER BY coin, created_at DESC, bill_id::numeric DESC",
    );
    for (const b of balances) expect(res.stdout).toContain(`  ${b.coin.padEnd(6)} ${b.balance}  (bill`);
    expect(res.stdout).toMatch(/snapshot rows: account_snapshots [1-9]/);
    // The worker verified the books it built, collateral cross-checks included.
    expect(res.stdout).toMatch(/incremental verify: pass \(\d+ checks\)/);
  });
});

describe("ledger-sync demo, interrupted", () => {
  it("stops cleanly on Ctrl-C (SIGINT): exit 130, and the redis-server it started is gone", async () => {
    const { answers, startCli, waitFor } = await import("../support/processes.ts");
    const cwd = mkdtempSync(join(tmpdir(), "ls-demo-int-"));
    // No REDIS_URL: the demo starts (and must stop) its own redis-server.
    const demo = startCli(
      ["demo", "--bills", "1500", "--for", "60"],
      { DATABASE_URL: t.url, QUEUE_PREFIX: `${r.prefix}_int` },
      cwd,
    );
    try {
      await waitFor("the demo's worker running", async () => demo.output().includes("worker running"), 60_000, 100);
      const port = Number(/local redis-server at redis:\/\/127\.0\.0\.1:(\d+)/.exec(demo.output())?.[1]);
      expect(port).toBeGreaterThan(0);
      expect(await answers(port)).toBe(true);
      demo.signal("SIGINT");
      expect(await demo.exited).toBe(130);
      expect(demo.output()).toMatch(/interrupted; everything started by the demo was stopped/);
      expect(await answers(port)).toBe(false);
    } finally {
      demo.signal("SIGKILL");
    }
  });
});
