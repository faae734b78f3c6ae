// Whether this test run can have a Redis. Read by vitest.config.ts (which skips the files tagged
// `redis` when not) and by the global setup (which says so in one line, or starts one).
import { redisUnavailable } from "../../src/local-services/redis.ts";

/**
 * Why no Redis can be had here, or undefined when one can: TEST_REDIS_URL names one, a
 * redis-server is installed, or root can install it. In CI a missing Redis must fail the run, so
 * there it is never a reason to skip.
 */
export function noTestRedis(): string | undefined {
  return process.env.TEST_REDIS_URL || process.env.CI ? undefined : redisUnavailable();
}
