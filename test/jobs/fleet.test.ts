// @module-tag redis
// A fleet as an operator runs one: 200 accounts in the accounts table, one worker process, the
// sandbox serving them all from one IP budget, new bills arriving while it runs. Accounts are
// added, rotated, disabled and removed through the CLI while the worker syncs; the books stay
// exact, nothing is refused as too many, connections stay within DATABASE_POOL_MAX, and no secret
// reaches the logs, /metrics or a dump.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExchangeCredentials } from "../../src/config/index.ts";
import { generateMasterKeyHex, loadMasterKey } from "../../src/config/master-key.ts";
import { seal } from "../../src/config/sealed-credentials.ts";
import { fleetCredentials, fleetUid, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { insertAccount } from "../../src/store/accounts/registry.ts";
import { runCli } from "../support/cli.ts";
import { dumpText } from "../support/dump.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { freePort, startCli, waitFor, type Proc } from "../support/processes.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";
import { asRows, storedBills } from "../support/sandbox-sync.ts";

const SEED = 77;
const FLEET = Number(process.env.FLEET_TEST_ACCOUNTS ?? 200);
// The accounts the worker starts with; FLEET is added while it runs.
const REGISTERED = FLEET;
const BILLS_INTERVAL_MS = 15_000;
const POOL_MAX = 8;
const masterKeyHex = generateMasterKeyHex();
const name = (i: number) => `f${String(i).padStart(4, "0")}`;

let database: MigratedDb;
let redis: TestRedis;
let sandbox: Sandbox;
let env: Record<string, string>;
let worker: Proc;
let metricsPort: number;

beforeAll(async () => {
  database = await createMigratedDb();
  redis = await createTestRedis();
  sandbox = await startSandbox({
    seed: SEED,
    fleet: { accounts: FLEET + 1, billsPerAccount: 20 },
    // Two days of history: a few windows per account, so the fleet's first sync stays short.
    startMs: Date.now() - 2 * 86_400_000,
    limits: { ipWeight: 1000, uidWeight: 500, windowMs: 10_000 },
    accountEvolution: "manual",
  });
  const master = loadMasterKey({ LEDGER_SYNC_MASTER_KEY: masterKeyHex })!;
  for (let i = 0; i < REGISTERED; i++) {
    const c: ExchangeCredentials = fleetCredentials(SEED, i);
    await insertAccount(database.db, {
      name: name(i),
      uid: fleetUid(SEED, i),
      coinIds: i % 10 === 0 ? ["2"] : [],
      backfillFromMs: null,
      billsSource: null,
      sealed: seal(master, name(i), c),
    });
  }
  metricsPort = await freePort();
  // The worker's connections carry their own application_name (the URL's wins over the pool's), so
  // they can be counted apart from this test's.
  const workerUrl = new URL(database.url);
  workerUrl.searchParams.set("application_name", "fleet-worker");
  env = {
    DATABASE_URL: workerUrl.toString(),
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    EXCHANGE_BASE_URL: sandbox.url,
    LEDGER_SYNC_MASTER_KEY: masterKeyHex,
    BACKFILL_FROM: String(Date.now() - 3 * 86_400_000),
    RATE_LIMIT_IP_WEIGHT: "1000",
    BILLS_INTERVAL_MS: String(BILLS_INTERVAL_MS),
    SNAPSHOT_INTERVAL_MS: "60000",
    ACCOUNTS_REFRESH_MS: "1000",
    DATABASE_POOL_MAX: String(POOL_MAX),
    SYNC_RESWEEP_HOURS: "0",
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
    SHUTDOWN_TIMEOUT_MS: "5000",
  };
  worker = startCli(["worker"], { ...env, METRICS_PORT: String(metricsPort) });
}, 120_000);
afterAll(async () => {
  worker?.signal("SIGKILL");
  await sandbox?.close();
  await redis?.cleanup();
  await database?.close();
});

async function rows<T>(sql: string, ...params: unknown[]): Promise<T[]> {
  return database.db.$queryRawUnsafe<T[]>(sql, ...params);
}
const billCount = async (account: string) =>
  (await rows<{ n: number }>("SELECT count(*)::int AS n FROM bills WHERE account_name = $1", account))[0]!.n;

/** Accounts whose stored bills equal the sandbox's, of those listed. */
async function exactAccounts(indexes: number[]): Promise<number[]> {
  const counts = new Map(
    (await rows<{ a: string; n: number }>("SELECT account_name AS a, count(*)::int AS n FROM bills GROUP BY 1")).map(
      (r) => [r.a, r.n],
    ),
  );
  return indexes.filter((i) => counts.get(name(i)) === sandbox.fleet!.bills(i).length);
}

describe(`a fleet of ${FLEET} accounts on one IP`, () => {
  it("syncs every account exactly, with no 429, within DATABASE_POOL_MAX connections", async () => {
    const all = Array.from({ length: REGISTERED }, (_, i) => i);
    let peakConnections = 0;
    await waitFor(
      "every account's history stored",
      async () => {
        const [c] = await rows<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'fleet-worker'",
        );
        peakConnections = Math.max(peakConnections, c!.n);
        return (await exactAccounts(all)).length === REGISTERED;
      },
      240_000,
      500,
    );
    for (const i of [0, 1, REGISTERED - 1])
      expect(await storedBills(database.db, name(i))).toEqual(asRows(sandbox.fleet!.bills(i)));
    expect(peakConnections).toBeGreaterThan(0);
    expect(peakConnections).toBeLessThanOrEqual(POOL_MAX);
    expect(sandbox.stats().rateLimited).toBe(0);
  }, 300_000);

  it("stores bills that appear while it runs, for every account, each interval", async () => {
    const picked = Array.from({ length: 20 }, (_, k) => Math.floor((k * REGISTERED) / 20));
    for (const i of picked) sandbox.appendFleetBills(i, 2);
    await waitFor(
      "the new bills stored",
      async () => (await exactAccounts(picked)).length === picked.length,
      4 * BILLS_INTERVAL_MS,
      500,
    );
    // Every account had a successful bills run after the new bills appeared: none starves.
    const since = new Date(Date.now() - 4 * BILLS_INTERVAL_MS);
    const [r] = await rows<{ n: number }>(
      "SELECT count(DISTINCT account_name)::int AS n FROM sync_runs WHERE stream = 'bills' AND outcome = 'ok' AND finished_at >= $1",
      since,
    );
    expect(r!.n).toBe(REGISTERED);
    expect(sandbox.stats().rateLimited).toBe(0);
  }, 120_000);

  it("takes an added account, a rotated one, and stops a disabled and a removed one, without a restart", async () => {
    const added = FLEET;
    const c = fleetCredentials(SEED, added);
    const keyEnv = { N_API_KEY: c.apiKey, N_API_SECRET: c.apiSecret, N_API_PASSPHRASE: c.passphrase };
    const add = await runCli(["accounts", "add", name(added), "--coins", "2", "--from-env", "N"], {
      ...env,
      ...keyEnv,
    });
    expect(add.code, add.stderr).toBe(0);
    const r = fleetCredentials(SEED, 1);
    // Account 1 snapshots no coin: the UID is read through coin 2's account endpoint.
    const rotate = await runCli(["accounts", "rotate", name(1), "--from-env", "R", "--uid-coin", "2"], {
      ...env,
      R_API_KEY: r.apiKey,
      R_API_SECRET: r.apiSecret,
      R_API_PASSPHRASE: r.passphrase,
    });
    expect(rotate.code, rotate.stderr).toBe(0);
    expect((await runCli(["accounts", "disable", name(2)], env)).code).toBe(0);
    expect((await runCli(["accounts", "remove", name(3)], env)).code).toBe(0);
    // The worker notices within ACCOUNTS_REFRESH_MS; then new bills reach only the active accounts.
    await waitFor(
      "the worker to see the changes",
      async () => worker.output().includes(`"added":["${name(added)}"]`),
      20_000,
    );
    // A job that was already running stops at its next page: let it end before counting.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const stoppedBefore = { disabled: await billCount(name(2)), removed: await billCount(name(3)) };
    for (const i of [1, 2, 3]) sandbox.appendFleetBills(i, 1);
    await waitFor(
      "the added and rotated accounts exact",
      async () => (await exactAccounts([added, 1])).length === 2,
      4 * BILLS_INTERVAL_MS,
      500,
    );
    expect(await storedBills(database.db, name(added))).toEqual(asRows(sandbox.fleet!.bills(added)));
    // Two more intervals: the paused and the removed account get nothing new, and keep their books.
    await new Promise((resolve) => setTimeout(resolve, 2 * BILLS_INTERVAL_MS));
    expect(await billCount(name(2))).toBe(stoppedBefore.disabled);
    expect(await billCount(name(3))).toBe(stoppedBefore.removed);
    expect(stoppedBefore.removed).toBeGreaterThan(0);
  }, 180_000);

  it("keeps syncing through `accounts rekey`, on the master key it started with", async () => {
    const next = generateMasterKeyHex();
    const r = await runCli(["accounts", "rekey"], { ...env, LEDGER_SYNC_NEW_MASTER_KEY: next });
    expect(r.code, r.stderr).toBe(0);
    const logged = worker.output().length;
    const picked = [0, 5, REGISTERED - 2];
    for (const i of picked) sandbox.appendFleetBills(i, 1);
    await waitFor(
      "bills stored after the rekey",
      async () => (await exactAccounts(picked)).length === picked.length,
      4 * BILLS_INTERVAL_MS,
      500,
    );
    // The worker holds the credentials it opened: no warning about the rows it can no longer open.
    expect(worker.output().slice(logged)).not.toMatch(/could not re-read the accounts|cannot be opened/);
  }, 120_000);

  it("keeps every secret out of the logs, /metrics and a dump", async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const dump = await dumpText(database.url);
    const logs = worker.output();
    expect(logs).toContain('"msg":"worker started"');
    for (const i of [0, 1, 2, 3, FLEET]) {
      const c = fleetCredentials(SEED, i);
      for (const secret of [c.apiSecret, c.passphrase, c.apiKey]) {
        expect(logs).not.toContain(secret);
        expect(metrics).not.toContain(secret);
        expect(dump).not.toContain(secret);
      }
    }
    expect(logs).not.toContain(masterKeyHex);
    expect(dump).not.toContain(masterKeyHex);
  });

  it("a worker started with the wrong master key exits 2 with one line naming the variable", async () => {
    const wrong = startCli(["worker"], {
      ...env,
      LEDGER_SYNC_MASTER_KEY: generateMasterKeyHex(),
      METRICS_PORT: String(await freePort()),
    });
    expect(await wrong.exited).toBe(2);
    expect(wrong.output()).toMatch(/LEDGER_SYNC_MASTER_KEY gives key id [0-9a-f]{16}/);
  }, 60_000);

  it("one scheduler: no BullMQ job scheduler per account, due times in PostgreSQL", async () => {
    const { Queue } = await import("bullmq");
    const q = new Queue("bills", { connection: redis.client, prefix: redis.prefix });
    try {
      expect(await q.getJobSchedulers(0, -1)).toEqual([]);
    } finally {
      await q.close();
    }
    const [s] = await rows<{ n: number }>("SELECT count(*)::int AS n FROM sync_schedule WHERE kind = 'bills'");
    expect(s!.n).toBeGreaterThanOrEqual(REGISTERED - 1);
    worker.signal("SIGTERM");
    expect(await worker.exited).toBe(0);
  }, 60_000);
});
