// A read-only role for BI users: SELECT on every table and view of the schema (now and created by
// later migrations) and nothing else; of the accounts table, only the columns without
// secrets. Created if missing, brought up to date if present.
import { ACCOUNT_PUBLIC_COLUMNS } from "./accounts/columns.ts";
import type { Db } from "./prisma.ts";

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export async function grantReadonly(db: Db, role: string, password?: string): Promise<void> {
  // Identifiers cannot be bound as parameters: only a plain lower-case name is accepted.
  if (!ROLE_NAME.test(role))
    throw new Error(
      `role name "${role}" must be 1-63 lower-case letters, digits or '_', starting with a letter or '_'`,
    );
  const q = `"${role}"`;
  await db.$transaction(async (tx) => {
    const exists =
      (
        await tx.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM pg_roles WHERE rolname = $1", role)
      )[0]!.n > 0;
    if (!exists) await tx.$executeRawUnsafe(`CREATE ROLE ${q} NOLOGIN`);
    if (password !== undefined) {
      // The password is sent as a literal here (ALTER ROLE takes no parameters); quote it safely.
      await tx.$executeRawUnsafe(`ALTER ROLE ${q} LOGIN PASSWORD '${password.replaceAll("'", "''")}'`);
    }
    const schema = (await tx.$queryRawUnsafe<{ s: string }[]>("SELECT current_schema() AS s"))[0]!.s;
    const db = (await tx.$queryRawUnsafe<{ d: string }[]>("SELECT current_database() AS d"))[0]!.d;
    await tx.$executeRawUnsafe(`GRANT CONNECT ON DATABASE "${db}" TO ${q}`);
    await tx.$executeRawUnsafe(`GRANT USAGE ON SCHEMA "${schema}" TO ${q}`);
    // Nothing but SELECT, whatever was granted before.
    await tx.$executeRawUnsafe(`REVOKE ALL ON ALL TABLES IN SCHEMA "${schema}" FROM ${q}`);
    await tx.$executeRawUnsafe(`REVOKE CREATE ON SCHEMA "${schema}" FROM ${q}`);
    await tx.$executeRawUnsafe(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO ${q}`);
    await tx.$executeRawUnsafe(`ALTER DEFAULT PRIVILEGES IN SCHEMA "${schema}" GRANT SELECT ON TABLES TO ${q}`);
    // The accounts table's sealed credentials are for the processes holding the master key only.
    const accounts = await tx.$queryRawUnsafe<{ t: string | null }[]>(
      `SELECT to_regclass('"${schema}".accounts')::text AS t`,
    );
    if (accounts[0]?.t) {
      const columns = ACCOUNT_PUBLIC_COLUMNS.map((c) => `"${c}"`).join(", ");
      await tx.$executeRawUnsafe(`REVOKE SELECT ON "${schema}"."accounts" FROM ${q}`);
      await tx.$executeRawUnsafe(`GRANT SELECT (${columns}) ON "${schema}"."accounts" TO ${q}`);
    }
  });
}
