import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Integration tests talk to real Postgres and a real HTTP sandbox; give them room.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores: more forks than that only adds contention.
    pool: "forks",
    maxWorkers: 2,
  },
});
