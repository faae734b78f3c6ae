// @module-tag redis
// @module-tag pgbouncer
// One writer per account behind PgBouncer in transaction mode (pool of 3), the database owned by a
// plain role (issue 31). Judged by what is stored, not by how the lock is kept: no two bills (or
// snapshot) runs of an account overlap in sync_runs, every account's bills equal the exchange's, and
// no lock outlives its holder (after the workers stop, or after a kill -9, the next `sync --once`
// exits 0, not 5). Every wait is bounded: a stalled worker fails the test with its last log line.
import { describe, expect, inject, it } from "vitest";
import { killedSyncScenario, writersScenario } from "../../support/infra/pooler-scenarios.ts";
import type { InfraServices } from "../../support/infra/scenario.ts";

const services = (): InfraServices => ({ adminUrl: inject("adminDatabaseUrl"), redisUrl: inject("redisUrl") });

describe("writers through a transaction-mode pooler", () => {
  it("two workers and concurrent sync --once: runs complete, none overlap, bills exact, no orphaned lock", async () => {
    const r = await writersScenario(services(), {
      workers: 2,
      accounts: 3,
      bills: 300,
      loopRounds: 4,
      settleMs: 30_000,
    });
    expect(r.failures, r.line).toEqual([]);
  });

  it("kill -9 of a sync --once mid-run: each next sync --once exits 0 at once, and ends exact", async () => {
    const r = await killedSyncScenario(services(), { bills: 400 });
    expect(r.failures, r.line).toEqual([]);
  });
});
