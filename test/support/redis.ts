// Per-test-file isolation on the shared test Redis: a unique key prefix, deleted afterwards.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { inject } from "vitest";

export interface TestRedis {
  url: string;
  prefix: string;
  client: Redis;
  cleanup(): Promise<void>;
}

export async function createTestRedis(): Promise<TestRedis> {
  const url = inject("redisUrl");
  const prefix = `ls_test_${randomBytes(4).toString("hex")}`;
  const client = new Redis(url, { maxRetriesPerRequest: null });
  return {
    url,
    prefix,
    client,
    cleanup: async () => {
      const keys = await client.keys(`${prefix}*`);
      if (keys.length) await client.del(...keys);
      client.disconnect();
    },
  };
}
