import { defineConfig } from "vitest/config";
import { noTestChromium } from "./test/support/test-chromium-policy.ts";
import { noTestPgBouncer } from "./test/support/test-pgbouncer-policy.ts";
import { noTestPrometheus } from "./test/support/test-prometheus-policy.ts";
import { noTestRedis } from "./test/support/test-redis-policy.ts";

// Test files that need a Redis say so on their first line (`// @module-tag redis`). Where none can
// be had (no TEST_REDIS_URL, no redis-server, and not root to install one) they are skipped, and
// the global setup says so in one line; CI always has one, and there a missing Redis fails the run.
const noRedis = noTestRedis();
// Likewise `// @module-tag prometheus` for the files that run promtool or a Prometheus server.
const noPrometheus = noTestPrometheus();
// Likewise `// @module-tag chromium` for the files that drive a real browser (Debian's chromium).
const noChromium = noTestChromium();
// Likewise `// @module-tag pgbouncer` for the files that put PgBouncer in front of PostgreSQL.
const noPgBouncer = noTestPgBouncer();

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The failures again, last: CI shows the tail of the output (test/support/failure-summary-reporter.ts).
    reporters: ["default", "./test/support/failure-summary-reporter.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    tags: [
      {
        name: "redis",
        description: "needs a Redis server (TEST_REDIS_URL, or a local redis-server)",
        skip: noRedis !== undefined,
      },
      {
        name: "prometheus",
        description: "needs promtool and prometheus (Debian's prometheus package; root installs it)",
        skip: noPrometheus !== undefined,
      },
      {
        name: "chromium",
        description: "needs a browser: /usr/bin/chromium (Debian's chromium package; root installs it)",
        skip: noChromium !== undefined,
      },
      {
        name: "pgbouncer",
        description: "needs PgBouncer: /usr/sbin/pgbouncer (Debian's pgbouncer package; root installs it)",
        skip: noPgBouncer !== undefined,
      },
    ],
    // Integration tests talk to real Postgres and a real HTTP sandbox; give them room.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: more forks than that only adds contention.
    pool: "forks",
    maxWorkers: 2,
  },
});
