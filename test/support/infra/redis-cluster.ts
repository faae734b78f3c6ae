// The worker on a three-master Redis Cluster of our own on loopback (test/support/redis-cluster.ts):
// with QUEUE_PREFIX={ls} it syncs an account of the sandbox exchange through the cluster, the weight
// gate's scripts run, and no log line says CROSSSLOT; QUEUE_PREFIX=ledger-sync is refused at start
// naming the hash tag; and the cluster named without REDIS_CLUSTER=on is refused at start.
// Shared by test/jobs/worker-redis-cluster.test.ts and the infrastructure runner.
import { Redis } from "ioredis";
import { ConfigError, loadConfig } from "../../../src/config/index.ts";
import { startWorker } from "../../../src/jobs/worker.ts";
import { createLogger } from "../../../src/log/logger.ts";
import { sandboxExchangeEnv, startSandbox } from "../../../src/sandbox/index.ts";
import { startRedisCluster } from "../redis-cluster.ts";
import { until } from "../redis-sentinel.ts";
import { scenarioDatabase, type RedisScenarioOptions, type RedisScenarioResult } from "./redis-failover.ts";
import { capturingLogger } from "../capturing-logger.ts";

export async function redisClusterWorker(o: RedisScenarioOptions): Promise<RedisScenarioResult> {
  const bills = o.small ? 50 : 5000;
  const account = "cluster";
  const cluster = await startRedisCluster();
  const database = await scenarioDatabase().catch(async (err: unknown) => {
    await cluster.stop();
    throw err;
  });
  const sandbox = await startSandbox({ seed: 331, billCount: bills, limits: null });
  const failures: string[] = [];
  const expected = sandbox.truth().length;
  try {
    o.log(`cluster of 3 masters on ports ${cluster.ports.join(",")}`);
    const env = (prefix: string, clusterMode: boolean) => ({
      ...sandboxExchangeEnv(sandbox.url),
      ACCOUNT_NAME: account,
      BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
      DATABASE_URL: database.url,
      REDIS_URL: cluster.url,
      METRICS_PORT: "0",
      BILLS_INTERVAL_MS: "200",
      QUEUE_PREFIX: prefix,
      ...(clusterMode ? { REDIS_CLUSTER: "on" } : {}),
    });

    // A prefix without a hash tag: refused before any connection, naming the reason and the fix.
    let refusal = "";
    try {
      loadConfig(env("ledger-sync", true));
    } catch (err) {
      if (err instanceof ConfigError) refusal = err.message;
      else throw err;
    }
    if (!/hash tag/.test(refusal) || !/CROSSSLOT/.test(refusal) || !refusal.includes("QUEUE_PREFIX={ls}"))
      failures.push(
        `QUEUE_PREFIX=ledger-sync on a cluster was not refused naming the hash tag (${refusal || "accepted"})`,
      );
    else o.log(`refused: ${refusal}`);

    // The cluster named as a single server: refused at start, naming REDIS_CLUSTER=on.
    const undeclared = await startWorker(loadConfig(env("{ls}", false)), createLogger("silent")).then(
      async (w) => {
        await w.stop("test");
        return "started";
      },
      (err: Error) => err.message,
    );
    if (!undeclared.includes("REDIS_CLUSTER=on"))
      failures.push(`a cluster without REDIS_CLUSTER was not refused (${undeclared})`);

    const { logger, lines } = capturingLogger();
    const started = Date.now();
    const worker = await startWorker(loadConfig(env("{ls}", true)), logger);
    let stored = 0;
    try {
      await until(
        async () => {
          const rows = await database.db.$queryRawUnsafe<{ n: bigint }[]>(
            "SELECT count(*) AS n FROM bills WHERE account_name = $1",
            account,
          );
          stored = Number(rows[0]!.n);
          return stored >= expected;
        },
        60_000,
        `the account's bills did not all arrive through the cluster`,
      );
    } catch (err) {
      failures.push((err as Error).message);
    } finally {
      await worker.stop("scenario done");
    }
    const synced = ((Date.now() - started) / 1000).toFixed(1);
    // Every key is in the slot of "ls": the weight gate's keys are there, on one node.
    let weightKeys = 0;
    const nodesWithKeys = new Set<number>();
    for (const port of cluster.ports) {
      const node = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 1 });
      try {
        const keys = await node.keys("*");
        if (keys.length > 0) nodesWithKeys.add(port);
        weightKeys += keys.filter((k) => k.startsWith("{ls}:weight:")).length;
        const stray = keys.filter((k) => !k.startsWith("{ls}:"));
        if (stray.length > 0) failures.push(`keys without the prefix's hash tag: ${stray.slice(0, 3).join(", ")}`);
      } finally {
        node.disconnect();
      }
    }
    if (weightKeys === 0) failures.push("no weight-budget key in the cluster: the gate's scripts did not run");
    if (nodesWithKeys.size > 1) failures.push(`keys on ${nodesWithKeys.size} nodes, not one slot's node`);
    const crossslot = lines.filter((l) => /CROSSSLOT|MOVED|CLUSTERDOWN/.test(l));
    if (crossslot.length > 0) failures.push(`${crossslot.length} log lines name CROSSSLOT/MOVED: ${crossslot[0]}`);
    if (stored !== expected) failures.push(`${stored} bills stored, the exchange has ${expected}`);
    const line =
      `redis-cluster (3 masters, QUEUE_PREFIX={ls}): ${stored} of ${expected} bills synced in ${synced} s, ` +
      `weight-budget keys ${weightKeys}, CROSSSLOT lines ${crossslot.length}, prefix ledger-sync refused ` +
      `${refusal ? "yes" : "no"}` +
      (failures.length > 0 ? `; FAILED: ${failures.join("; ")}` : "");
    o.log(line);
    return { ok: failures.length === 0, line };
  } finally {
    await sandbox.close();
    await database.close();
    await cluster.stop();
  }
}
