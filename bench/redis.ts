// Redis for the benchmarks that run workers: BENCH_REDIS_URL / TEST_REDIS_URL when set, else a
// local redis-server started for the run. Each use gets its own key prefix (QUEUE_PREFIX), and
// its keys are deleted by its scope.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { startRedisServer } from "../src/local-services/redis.ts";
import { deleteRedisKeys } from "../test/support/infra/scenario.ts";
import { runScope, type Cleanup } from "./cleanup.ts";

let server: Promise<string> | undefined;

function benchRedisUrl(): Promise<string> {
  server ??= (async () => {
    const url = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL;
    if (url) return url;
    const local = await startRedisServer((line) => process.stderr.write(`${line}\n`));
    runScope.add("stop the local redis-server", () => local.stop());
    return local.url;
  })();
  return server;
}

export interface BenchRedis {
  url: string;
  prefix: string;
}

export async function benchRedis(scope: Cleanup): Promise<BenchRedis> {
  const url = await benchRedisUrl();
  const prefix = `ls_bench_${randomBytes(4).toString("hex")}`;
  scope.add(`delete Redis keys ${prefix}*`, () => deleteRedisKeys(url, prefix));

  return { url, prefix };
}

/**
 * CPU seconds the Redis server has used (INFO cpu: user + system, main thread and children): read
 * before and after a run, the difference is what the run cost Redis, as long as nothing else used
 * the same server meanwhile.
 */
export async function redisServerCpu(connection: Redis): Promise<number> {
  const info = await connection.info("cpu");
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
  return field("used_cpu_user") + field("used_cpu_sys");
}
