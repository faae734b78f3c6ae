// @module-tag redis
// Worker processes as they run in production: real Redis, real PostgreSQL, the sandbox exchange.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  sandboxExchangeEnv,
  startSandbox,
  type Sandbox,
  type SandboxCredentials,
} from "../../src/sandbox/index.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { freePort, startCli, waitFor } from "../support/processes.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";

let database: MigratedDb;
let redis: TestRedis;
beforeAll(async () => {
  database = await createMigratedDb();
  redis = await createTestRedis();
});
afterAll(async () => {
  await database.close();
  await redis.cleanup();
});

const count = async (account: string) =>
  (
    await database.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM bills WHERE account_name = $1",
      account,
    )
  )[0]!.n;

/** The single-account variables for the sandbox's default credentials. */
const sandboxAccount = (name: string) => ({ ...sandboxExchangeEnv(), ACCOUNT_NAME: name });

function baseEnv(sandbox: Sandbox, extra: Record<string, string>): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    EXCHANGE_BASE_URL: sandbox.url,
    LOG_LEVEL: "info",
    ...extra,
  };
}

describe("worker processes", () => {
  it("two workers keep three accounts exact within a shared small budget, then drain on SIGTERM", async () => {
    const creds: SandboxCredentials[] = [1, 2].map((i) => ({
      apiKey: `key-${i}`,
      apiSecret: `secret-${i}`,
      passphrase: `pass-${i}`,
    }));
    const sandbox = await startSandbox({
      seed: 31,
      billCount: 1500,
      limits: { ipWeight: 100, uidWeight: 60, windowMs: 1000 },
      extraCredentials: creds,
    });
    const all = [DEFAULT_SANDBOX_CREDENTIALS, ...creds];
    const dir = mkdtempSync(join(tmpdir(), "ls-accounts-"));
    const accountsFile = join(dir, "accounts.yaml");
    writeFileSync(
      accountsFile,
      `accounts:\n${all.map((_, i) => `  - name: acct${i}\n    apiKeyEnv: K${i}\n    apiSecretEnv: S${i}\n    passphraseEnv: P${i}\n`).join("")}`,
    );
    const secrets = Object.fromEntries(
      all.flatMap((c, i) => [
        [`K${i}`, c.apiKey],
        [`S${i}`, c.apiSecret],
        [`P${i}`, c.passphrase],
      ]),
    );
    const env = baseEnv(sandbox, {
      ...secrets,
      ACCOUNTS_FILE: accountsFile,
      BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
      BILLS_INTERVAL_MS: "1000",
      RATE_LIMIT_IP_WEIGHT: "100",
      RATE_LIMIT_UID_WEIGHT: "60",
      RATE_LIMIT_WINDOW_MS: "1000",
      SHUTDOWN_TIMEOUT_MS: "5000",
    });
    const ports = [await freePort(), await freePort()];
    const workers = ports.map((port) => startCli(["worker"], { ...env, METRICS_PORT: String(port) }));
    try {
      const truth = asRows(sandbox.truth());
      await waitFor(
        "all three accounts synced",
        async () => (await Promise.all(all.map((_, i) => count(`acct${i}`)))).every((n) => n >= truth.length),
        90_000,
      );
      for (let i = 0; i < all.length; i++) expect(await storedBills(database.db, `acct${i}`)).toEqual(truth);
      const stats = sandbox.stats();
      expect(stats.rateLimited).toBe(0);
      expect(stats.maxUidWeightInWindow).toBeLessThanOrEqual(60);
      expect(stats.maxIpWeightInWindow).toBeLessThanOrEqual(100);

      // Either process may have run any given job: look at both, as a Prometheus server would.
      const metrics = (
        await Promise.all(ports.map(async (p) => (await fetch(`http://127.0.0.1:${p}/metrics`)).text()))
      ).join("\n");
      expect(metrics).toMatch(
        /ledger_sync_job_duration_seconds_count\{queue="bills",job_name="bills",outcome="completed"\} [1-9]/,
      );
      expect(metrics).toMatch(/ledger_sync_weight_budget\{budget="uid",scope="acct0"\} 60/);
      const health = await fetch(`http://127.0.0.1:${ports[1]}/healthz`);
      expect(health.status).toBe(200);
      expect(((await health.json()) as { checks: { name: string }[] }).checks.map((c) => c.name)).toEqual([
        "redis",
        "redis-memory",
        "postgres",
        "sync:acct0/bills",
        "sync:acct1/bills",
        "sync:acct2/bills",
      ]);

      const stoppedAt = Date.now();
      for (const w of workers) w.signal("SIGTERM");
      const codes = await Promise.all(workers.map((w) => w.exited));
      expect(codes).toEqual([0, 0]);
      expect(Date.now() - stoppedAt).toBeLessThan(5000 + 3000);
      for (const w of workers) expect(w.output()).toContain("shut down cleanly");
    } finally {
      for (const w of workers) w.signal("SIGKILL");
      await sandbox.close();
    }
  });

  it("a worker killed with SIGKILL mid-backfill is replaced and the backfill ends exact", async () => {
    const sandbox = await startSandbox({
      seed: 32,
      billCount: 12_000,
      limits: { ipWeight: 200, uidWeight: 150, windowMs: 1000 },
    });
    const truth = sandbox.truth();
    const env = baseEnv(sandbox, {
      ...sandboxAccount("kill"),
      // The scheduled job covers only the last minute: the backfill does the history.
      BACKFILL_FROM: String(Date.now() - 60_000),
      BILLS_INTERVAL_MS: "3600000",
      RATE_LIMIT_IP_WEIGHT: "200",
      RATE_LIMIT_UID_WEIGHT: "150",
      RATE_LIMIT_WINDOW_MS: "1000",
      JOB_LOCK_DURATION_MS: "1500",
      SHUTDOWN_TIMEOUT_MS: "2000",
    });
    const first = startCli(["worker"], { ...env, METRICS_PORT: String(await freePort()) });
    const backfill = startCli(
      ["backfill", "--from", String(truth[0]!.cTimeMs), "--to", String(truth.at(-1)!.cTimeMs), "--window-hours", "48"],
      env,
    );
    let second: ReturnType<typeof startCli> | undefined;
    try {
      await waitFor("the backfill under way", async () => (await count("kill")) > 2000, 60_000, 100);
      first.signal("SIGKILL");
      await first.exited;
      const atKill = await count("kill");
      expect(atKill).toBeLessThan(truth.length);
      second = startCli(["worker"], { ...env, METRICS_PORT: String(await freePort()) });
      expect(await backfill.exited).toBe(0);
      expect(backfill.output()).toMatch(/backfill complete: \d+ windows, 12000 bills in range/);
      expect(await storedBills(database.db, "kill")).toEqual(asRows(truth));
      second.signal("SIGTERM");
      expect(await second.exited).toBe(0);
    } finally {
      for (const p of [first, second, backfill]) p?.signal("SIGKILL");
      await sandbox.close();
    }
  });

  it("SIGTERM during a slow job: stops at the next page once SHUTDOWN_TIMEOUT_MS passes, exits 0, keeps committed progress", async () => {
    // Every request stalls 1.5 s: a backfill job is always mid-request when the signal comes.
    const sandbox = await startSandbox({
      seed: 33,
      billCount: 3000,
      limits: null,
      faults: { rate: 1, kinds: ["stall"] },
      stallMs: 1500,
    });
    const truth = sandbox.truth();
    const env = baseEnv(sandbox, {
      ...sandboxAccount("term"),
      BACKFILL_FROM: String(truth[0]!.cTimeMs),
      BILLS_INTERVAL_MS: "3600000",
      SHUTDOWN_TIMEOUT_MS: "2000",
      EXCHANGE_TIMEOUT_MS: "10000",
    });
    const worker = startCli(["worker"], { ...env, METRICS_PORT: String(await freePort()) });
    try {
      await waitFor(
        "the first bills job running",
        async () => worker.output().includes("bills sync starting"),
        30_000,
        100,
      );
      await new Promise((r) => setTimeout(r, 2000));
      const stoppedAt = Date.now();
      worker.signal("SIGTERM");
      expect(await worker.exited).toBe(0);
      // Timeout (2 s) + the request in flight (at most one 1.5 s stall) + closing.
      expect(Date.now() - stoppedAt).toBeLessThan(2000 + 1500 + 3000);
      expect(worker.output()).toContain("shutdown timeout: stopping running jobs at their next page");
      expect(worker.output()).toContain("shut down cleanly");
      // What was committed is exact: the stored bills are a prefix of the truth, up to the cursor.
      const cursor = (
        await database.db.$queryRawUnsafe<{ c: bigint }[]>(
          "SELECT cursor_ms AS c FROM sync_state WHERE account_name = 'term' AND stream = 'bills'",
        )
      )[0]?.c;
      const stored = await storedBills(database.db, "term");
      expect(stored).toEqual(asRows(truth.filter((b) => cursor !== undefined && b.cTimeMs <= Number(cursor))));
    } finally {
      worker.signal("SIGKILL");
      await sandbox.close();
    }
  });
});
