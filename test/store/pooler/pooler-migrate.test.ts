// @module-tag pgbouncer
// `migrate` behind PgBouncer in transaction mode, as the plain owner role (issue 31): two at once apply
// every migration once; one killed part-way leaves nothing half-applied and no lock behind, so each
// of the next migrates (lent other server connections) ends at once.
import { describe, expect, inject, it } from "vitest";
import { migrateScenario } from "../../support/infra/pooler-scenarios.ts";

describe("migrate through a transaction-mode pooler", () => {
  it("two at once apply each migration once; after a SIGKILL part-way, the next ones end at once", async () => {
    const r = await migrateScenario({ adminUrl: inject("adminDatabaseUrl"), redisUrl: inject("redisUrl") });
    expect(r.failures, r.line).toEqual([]);
  });
});
