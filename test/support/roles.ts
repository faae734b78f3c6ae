// Roles a test creates (grant-readonly's, say) are cluster-wide and outlive its database: drop
// their grants in the database, close the database, then drop the roles.
import pg from "pg";
import { inject } from "vitest";
import type { MigratedDb } from "./migrated-db.ts";

export async function closeWithRoles(t: Pick<MigratedDb, "db" | "close">, roles: readonly string[]): Promise<void> {
  for (const role of roles) await t.db.$executeRawUnsafe(`DROP OWNED BY "${role}"`);
  await t.close();
  const admin = new pg.Client({ connectionString: inject("adminDatabaseUrl") });
  await admin.connect();
  try {
    for (const role of roles) await admin.query(`DROP ROLE IF EXISTS "${role}"`);
  } finally {
    await admin.end();
  }
}
