// Provides every test file with the URL of a real PostgreSQL server it may create databases on,
// and of a real Redis. CI (and anyone with servers) sets TEST_DATABASE_URL and TEST_REDIS_URL;
// otherwise a local PostgreSQL is started under .data/test-postgres and a local redis-server, so
// that `npm test` works on a fresh machine with nothing installed. A service that cannot be
// started ends the run with one line saying what failed and what to do.
import type { TestProject } from "vitest/node";
import { LocalServiceError } from "../../src/local-services/errors.ts";
import type { LocalPostgres } from "../../src/local-services/postgres/index.ts";
import { startRedisServer, type RedisHandle } from "../../src/local-services/redis.ts";
import { ensureTestChromium, noTestChromium } from "./test-chromium-policy.ts";
import { ensureTestPgBouncer, noTestPgBouncer } from "./test-pgbouncer-policy.ts";
import { ensureTestPrometheus, noTestPrometheus } from "./test-prometheus-policy.ts";
import { noTestRedis } from "./test-redis-policy.ts";

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    /** Empty when no Redis can be had here: the files tagged `redis` are skipped then (vitest.config.ts). */
    redisUrl: string;
  }
}

const TEST_PG_PORT = Number(process.env.TEST_PG_PORT ?? 54329);

let local: LocalPostgres | undefined;
let redis: RedisHandle | undefined;

export async function setup(project: TestProject): Promise<void> {
  try {
    let url = process.env.TEST_DATABASE_URL;
    if (!url) {
      // Loaded only when needed: the local server is not part of a run against a real server.
      const { startLocalPostgres } = await import("../../src/local-services/postgres/index.ts");
      local = await startLocalPostgres(".data/test-postgres", TEST_PG_PORT, {
        settings: { fsync: "off" },
        instead: "set TEST_PG_PORT to another port, or TEST_DATABASE_URL to a PostgreSQL server of your own",
      });
      url = local.url;
    }
    project.provide("adminDatabaseUrl", url);

    let redisUrl = process.env.TEST_REDIS_URL ?? "";
    const noRedis = noTestRedis();
    if (noRedis) {
      process.stderr.write(
        `npm test: no Redis (${noRedis}): the test files that need one are skipped; install redis-server or set TEST_REDIS_URL to run them\n`,
      );
    } else if (!redisUrl) {
      redis = await startRedisServer((line) => process.stderr.write(`npm test: ${line}\n`));
      redisUrl = redis.url;
    }
    project.provide("redisUrl", redisUrl);

    // Debian packages the tagged files need (prometheus, chromium, pgbouncer): root installs a missing one;
    // anyone else has those files skipped, with one line saying so.
    for (const [unavailable, ensure] of [
      [noTestPrometheus, ensureTestPrometheus],
      [noTestChromium, ensureTestChromium],
      [noTestPgBouncer, ensureTestPgBouncer],
    ] as const) {
      const reason = unavailable();
      if (reason)
        process.stderr.write(
          `npm test: ${reason}: the test files that need it are skipped; install the package to run them\n`,
        );
      else ensure((line) => process.stderr.write(`npm test: ${line}\n`));
    }
  } catch (err) {
    if (!(err instanceof LocalServiceError)) throw err;
    // One line, not vitest's stack trace: this is the machine's set-up, not a test failing.
    process.stderr.write(`npm test: ${err.message}\n`);
    await teardown();
    process.exit(1);
  }
}

export async function teardown(): Promise<void> {
  await local?.stop();
  await redis?.stop();
}
