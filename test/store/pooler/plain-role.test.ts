// @module-tag pgbouncer
// The whole product under a role that owns its database and is nothing more (NOSUPERUSER NOCREATEDB
// NOCREATEROLE), as managed services hand one out, through PgBouncer in transaction mode (issue 31):
// migrate, sync --once, verify, close, export and status all end 0, and the bills are exact.
import { describe, expect, inject, it } from "vitest";
import { plainRoleScenario } from "../../support/infra/pooler-scenarios.ts";

describe("the plain owner role through a transaction-mode pooler", () => {
  it("migrate, sync --once, verify, close, export and status exit 0", async () => {
    const r = await plainRoleScenario({ adminUrl: inject("adminDatabaseUrl"), redisUrl: inject("redisUrl") });
    expect(r.failures, r.line).toEqual([]);
  });
});
