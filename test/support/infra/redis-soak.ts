// Redis memory per account over time (issue 31, "Redis as it is rented": "Redis memory per account
// stays flat over hours"). A redis-server of its own (noeviction), the sandbox exchange serving a
// fleet of accounts that keeps getting new bills, and two worker processes with short bills and
// snapshot intervals; Redis `INFO memory` used_memory and `DBSIZE` are sampled every interval. After
// a warm-up, the bytes per account (used_memory less the empty server's, over the accounts) at the
// first and the last sample are compared: ok when the growth is under 10%. A printed figure, never a
// timed assertion: no vitest test runs it (too slow for CI); `npm run test:infra -- --only
// redis-memory-soak` does. INFRA_SOAK_MINUTES sets the duration (default 20, small 1.5).
import { Redis } from "ioredis";
import { generateMasterKeyHex, loadMasterKey } from "../../../src/config/master-key.ts";
import { seal } from "../../../src/config/sealed-credentials.ts";
import { fleetCredentials, fleetUid, startSandbox } from "../../../src/sandbox/index.ts";
import { insertAccount } from "../../../src/store/accounts/registry.ts";
import { startConfiguredRedis } from "../configured-redis.ts";
import { freePort, startCli, type Proc } from "../processes.ts";
import type { RedisScenarioOptions, RedisScenarioResult } from "./redis-failover.ts";
import { scenarioDatabase } from "./redis-failover.ts";
import { lastLine, stopProc, thousands } from "./scenario.ts";

const SEED = 3137;
const WORKERS = 2;
/** Growth of the bytes per account, first sample after the warm-up to the last, that still passes. */
const MAX_GROWTH = 0.1;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sample {
  atMs: number;
  usedMemory: number;
  keys: number;
}

async function sample(redis: Redis, startedAt: number): Promise<Sample> {
  const info = await redis.info("memory");
  const used = /^used_memory:(\d+)/m.exec(info);
  if (!used) throw new Error("INFO memory has no used_memory");
  return { atMs: Date.now() - startedAt, usedMemory: Number(used[1]), keys: await redis.dbsize() };
}

const kB = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
const minutes = (ms: number) => {
  const m = ms / 60_000;
  return Number.isInteger(Math.round(m * 10) / 10) ? `${Math.round(m)} min` : `${m.toFixed(1)} min`;
};

/** The soak: `small` is 10 accounts for 1.5 minutes, else 100 for 20; INFRA_SOAK_MINUTES overrides the duration. */
export async function redisMemorySoak(o: RedisScenarioOptions): Promise<RedisScenarioResult> {
  const envMinutes = Number(process.env.INFRA_SOAK_MINUTES);
  const durationMs = (Number.isFinite(envMinutes) && envMinutes > 0 ? envMinutes : o.small ? 1.5 : 20) * 60_000;
  const accounts = o.small ? 10 : 100;
  const warmUpMs = durationMs / 4;
  const sampleEveryMs = o.small ? 5_000 : 10_000;
  const billsIntervalMs = o.small ? 5_000 : 10_000;
  const snapshotIntervalMs = o.small ? 10_000 : 20_000;
  const title = `redis-memory-soak ${WORKERS} workers ${accounts} accounts ${minutes(durationMs)}`;

  const redisServer = await startConfiguredRedis(["--maxmemory-policy", "noeviction"]);
  const cleanups: (() => Promise<unknown>)[] = [() => redisServer.stop()];
  const workers: Proc[] = [];
  let redis: Redis | undefined;
  try {
    const database = await scenarioDatabase();
    cleanups.push(() => database.close());
    const days = 3;
    const sandbox = await startSandbox({
      seed: SEED,
      // Bills keep coming: about one new bill per account every minute.
      fleet: { accounts, billsPerAccount: 50, liveBillsPerMinute: accounts },
      startMs: Date.now() - days * 86_400_000,
      limits: null,
    });
    cleanups.push(() => sandbox.close());
    const masterKeyHex = generateMasterKeyHex();
    const master = loadMasterKey({ LEDGER_SYNC_MASTER_KEY: masterKeyHex })!;
    const names = Array.from({ length: accounts }, (_, i) => `soak${String(i).padStart(4, "0")}`);
    for (let i = 0; i < accounts; i++)
      await insertAccount(database.db, {
        name: names[i]!,
        uid: fleetUid(SEED, i),
        coinIds: [],
        backfillFromMs: null,
        billsSource: null,
        sealed: seal(master, names[i]!, fleetCredentials(SEED, i)),
      });

    redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
    const empty = await sample(redis, Date.now());
    const env: Record<string, string> = {
      DATABASE_URL: database.url,
      REDIS_URL: redisServer.url,
      EXCHANGE_BASE_URL: sandbox.url,
      LEDGER_SYNC_MASTER_KEY: masterKeyHex,
      BACKFILL_FROM: String(Date.now() - days * 86_400_000),
      BILLS_INTERVAL_MS: String(billsIntervalMs),
      SNAPSHOT_INTERVAL_MS: String(snapshotIntervalMs),
      SYNC_RESWEEP_HOURS: "0",
      LOG_LEVEL: "warn",
      LOG_FORMAT: "json",
      SHUTDOWN_TIMEOUT_MS: "5000",
    };
    cleanups.push(async () => {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.signal("SIGKILL");
      await Promise.all(workers.map((w) => w.exited));
    });
    const startedAt = Date.now();
    for (let i = 0; i < WORKERS; i++)
      workers.push(startCli(["worker"], { ...env, METRICS_PORT: String(await freePort()) }));
    o.log(`${title}: ${WORKERS} workers started, empty Redis ${kB(empty.usedMemory)}, ${empty.keys} keys`);

    const failures: string[] = [];
    const samples: Sample[] = [];
    // Bounded: one sample per interval until the duration is up, or a worker exits.
    while (Date.now() - startedAt < durationMs) {
      await sleep(sampleEveryMs);
      const s = await sample(redis, startedAt);
      if (s.atMs >= warmUpMs) samples.push(s);
      o.log(`  ${minutes(s.atMs)}: used_memory ${kB(s.usedMemory)}, keys ${s.keys}`);
      const dead = workers.findIndex((w) => w.child.exitCode !== null || w.child.signalCode !== null);
      if (dead !== -1) {
        failures.push(`worker ${dead} exited early: ${lastLine(workers[dead]!.output())}`);
        break;
      }
    }
    const okBills = await database.db.$queryRawUnsafe<{ n: bigint }[]>(
      "SELECT count(*) AS n FROM sync_runs WHERE outcome = 'ok' AND (stream = 'bills' OR stream LIKE 'bills-%')",
    );
    for (const [i, w] of workers.entries())
      if (!(await stopProc(w, 15_000))) failures.push(`worker ${i} did not stop on SIGTERM`);

    const first = samples[0];
    const last = samples.at(-1);
    if (!first || !last || first === last) failures.push("fewer than two samples after the warm-up");
    const perAccount = (s: Sample) => (s.usedMemory - empty.usedMemory) / accounts;
    const growth = first && last ? perAccount(last) / perAccount(first) - 1 : Number.NaN;
    if (!(growth < MAX_GROWTH))
      failures.push(`bytes per account grew ${(growth * 100).toFixed(1)}% (at most ${MAX_GROWTH * 100}%)`);
    const figures =
      first && last
        ? `${kB(perAccount(first))}/account at ${minutes(first.atMs)}, ${kB(perAccount(last))}/account at ` +
          `${minutes(last.atMs)} (${growth >= 0 ? "+" : ""}${(growth * 100).toFixed(1)}%), ` +
          `keys ${thousands(first.keys)} -> ${thousands(last.keys)}`
        : "no samples";
    const line =
      `${title}: ${figures}, ok bills runs ${thousands(Number(okBills[0]!.n))}, ` +
      `live bills appended ${thousands(sandbox.fleet!.appended.length)}` +
      (failures.length > 0 ? `; FAILED: ${failures.join("; ")}` : "");
    o.log(line);
    return { ok: failures.length === 0, line };
  } finally {
    redis?.disconnect();
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  }
}
