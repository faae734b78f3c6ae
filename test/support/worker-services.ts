// What a test of a real worker process needs: a migrated database, a Redis key prefix and a small
// sandbox exchange, set up before the file's tests and torn down after them.
import { afterAll, beforeAll } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { createMigratedDb, type MigratedDb } from "./migrated-db.ts";
import { createTestRedis, type TestRedis } from "./redis.ts";

export interface WorkerServices {
  database: MigratedDb;
  redis: TestRedis;
  sandbox: Sandbox;
}

/** Registers the hooks; the returned object's fields are set once beforeAll has run. */
export function useWorkerServices(seed: number): WorkerServices {
  const services = {} as WorkerServices;
  beforeAll(async () => {
    services.database = await createMigratedDb();
    services.redis = await createTestRedis();
    services.sandbox = await startSandbox({ seed, billCount: 50, limits: null });
  });
  afterAll(async () => {
    await services.sandbox?.close();
    await services.database?.close();
    await services.redis?.cleanup();
  });
  return services;
}
