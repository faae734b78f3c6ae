// Provides every test file with the URL of a real PostgreSQL server it may create databases on.
// CI (and anyone with a server) sets TEST_DATABASE_URL; otherwise an embedded PostgreSQL is started
// under .data/test-postgres so that `npm test` works on a fresh machine with nothing installed.
import type { TestProject } from "vitest/node";
import type { EmbeddedHandle } from "../../src/store/embedded-postgres.ts";
import { startRedisServer, type RedisHandle } from "../../src/cli/demo/local-redis.ts";

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    redisUrl: string;
  }
}

let embedded: EmbeddedHandle | undefined;
let redis: RedisHandle | undefined;

export async function setup(project: TestProject): Promise<void> {
  let url = process.env.TEST_DATABASE_URL;
  if (!url) {
    // Loaded only when needed: the embedded server is not part of a run against a real server.
    const { startEmbeddedPostgres } = await import("../../src/store/embedded-postgres.ts");
    embedded = await startEmbeddedPostgres(".data/test-postgres", 54329);
    url = embedded.url;
  }
  project.provide("adminDatabaseUrl", url);

  let redisUrl = process.env.TEST_REDIS_URL;
  if (!redisUrl) {
    redis = await startRedisServer();
    redisUrl = redis.url;
  }
  project.provide("redisUrl", redisUrl);
}

export async function teardown(): Promise<void> {
  await embedded?.stop();
  await redis?.stop();
}
