// A read-only role for BI users: SELECT on every table and view of the schema (now and created by
// later migrations) and nothing else; of the accounts table, only the columns without secrets.
// Read-only by its grants alone, not by a session setting a pooler could drop. Created if missing
// (that needs CREATEROLE), brought up to date if present (that needs only ownership of the tables);
// role-grants.ts checks both before anything changes, and all of it is one transaction.
import { ACCOUNT_PUBLIC_COLUMNS } from "./accounts/columns.ts";
import type { Db } from "./prisma.ts";
import { checkRoleName, grantAccess, prepareRole, tableExists } from "./role-grants.ts";

export async function grantReadonly(db: Db, role: string, password?: string): Promise<void> {
  checkRoleName(role); // before connecting: a bad name is a usage error whatever the database
  await db.$transaction(async (tx) => {
    const t = await prepareRole(tx, "grant-readonly", role, password);
    const { q, schema } = t;
    await grantAccess(tx, t);
    // Nothing but SELECT, whatever was granted before.
    await tx.$executeRawUnsafe(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schema} FROM ${q}`);
    await tx.$executeRawUnsafe(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${q}`);
    await tx.$executeRawUnsafe(
      `ALTER DEFAULT PRIVILEGES FOR ROLE ${t.owner} IN SCHEMA ${schema} GRANT SELECT ON TABLES TO ${q}`,
    );
    // The accounts table's sealed credentials are for the processes holding the master key only.
    if (await tableExists(tx, t, "accounts")) {
      const columns = ACCOUNT_PUBLIC_COLUMNS.map((c) => `"${c}"`).join(", ");
      await tx.$executeRawUnsafe(`REVOKE SELECT ON ${schema}."accounts" FROM ${q}`);
      await tx.$executeRawUnsafe(`GRANT SELECT (${columns}) ON ${schema}."accounts" TO ${q}`);
    }
  });
}
