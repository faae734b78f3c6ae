// What grant-readonly and grant-runtime share: the role name rule, the checks made before anything
// is granted, and creating the role or setting its password. Every privilege the grants need is
// checked up front and a missing one is named with what to do, so a command run by a schema owner
// without CREATEROLE (what managed services hand out) changes nothing rather than half the grants:
// a GRANT by a role without the grant option only warns, it does not fail.
import type { Prisma } from "./generated/client.ts";

type Tx = Prisma.TransactionClient;

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A privilege the role running the command lacks; nothing was changed. */
export class MissingPrivilegeError extends Error {}

/** Identifiers cannot be bound as parameters: only a plain lower-case name is accepted. */
export function checkRoleName(role: string): void {
  if (!ROLE_NAME.test(role))
    throw new Error(
      `role name "${role}" must be 1-63 lower-case letters, digits or '_', starting with a letter or '_'`,
    );
}

export interface GrantTarget {
  /** The role, quoted. */
  q: string;
  /** The schema, quoted. */
  schema: string;
  /** The database, quoted. */
  database: string;
  /** The role that owns the migrations (quoted): ALTER DEFAULT PRIVILEGES covers what it creates later. */
  owner: string;
  /** Whether the role needs GRANT CONNECT / GRANT USAGE (false: it has them already, e.g. through PUBLIC). */
  grantConnect: boolean;
  grantUsage: boolean;
}

interface Facts {
  me: string;
  may_create_role: boolean;
  role_exists: boolean;
  role_is_super: boolean;
  schema: string;
  database: string;
  owner: string;
  owner_of_schema: boolean;
  connect_grantable: boolean;
  usage_grantable: boolean;
  role_connects: boolean;
  role_uses_schema: boolean;
  role_is_owner: boolean;
  not_mine: string[];
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Checks what `command` needs, then creates the role (NOLOGIN) if missing and sets its password if
 * one is given. Runs in the caller's transaction, before any grant.
 */
export async function prepareRole(tx: Tx, command: string, role: string, password?: string): Promise<GrantTarget> {
  checkRoleName(role);
  // The owner of the migrations table is the role migrate runs as; without it yet (grants before
  // the first migrate), the role running this command, which is then the one that will migrate.
  const [f] = await tx.$queryRawUnsafe<Facts[]>(
    `SELECT current_user::text AS me,
            (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) AS may_create_role,
            r.oid IS NOT NULL AS role_exists,
            coalesce(r.rolsuper, false) AS role_is_super,
            current_schema()::text AS schema,
            current_database()::text AS database,
            coalesce(m.owner, current_user::text) AS owner,
            pg_has_role(current_user, n.nspowner, 'MEMBER') AS owner_of_schema,
            has_database_privilege(current_database(), 'CONNECT WITH GRANT OPTION') AS connect_grantable,
            has_schema_privilege(n.oid, 'USAGE WITH GRANT OPTION') AS usage_grantable,
            r.oid IS NOT NULL AND has_database_privilege(r.oid, current_database(), 'CONNECT') AS role_connects,
            r.oid IS NOT NULL AND has_schema_privilege(r.oid, n.oid, 'USAGE') AS role_uses_schema,
            r.oid IS NOT NULL AND m.owner IS NOT NULL AND pg_has_role(r.oid, m.owner, 'MEMBER') AS role_is_owner,
            ARRAY(
              SELECT c.relname::text FROM pg_class c
              WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
                AND NOT pg_has_role(current_user, c.relowner, 'MEMBER')
              UNION ALL
              SELECT p.proname::text || '()' FROM pg_proc p
              WHERE p.pronamespace = n.oid AND NOT pg_has_role(current_user, p.proowner, 'MEMBER')
              ORDER BY 1
            ) AS not_mine
     FROM pg_namespace n
     LEFT JOIN pg_roles r ON r.rolname = $1
     LEFT JOIN LATERAL (
       SELECT pg_get_userbyid(c.relowner)::text AS owner FROM pg_class c
       WHERE c.relnamespace = n.oid AND c.relname = '_prisma_migrations'
     ) m ON true
     WHERE n.nspname = current_schema()`,
    role,
  );
  if (!f) throw new Error("no current schema: set the search_path of DATABASE_URL's role to the schema to grant on");
  const again = `then run \`ledger-sync ${command} ${role}\` again`;
  const admin = "ask your provider's admin role (or a role with CREATEROLE)";
  if (!f.role_exists && !f.may_create_role)
    throw new MissingPrivilegeError(
      `role ${role} does not exist, and creating it needs the CREATEROLE privilege, which ${f.me} does not have: ` +
        `${admin} to run \`CREATE ROLE ${role} LOGIN PASSWORD '…'\`, ${again} without --password-env ` +
        "(granting needs only ownership of the schema's tables). Nothing was changed.",
    );
  if (password !== undefined && !f.may_create_role)
    throw new MissingPrivilegeError(
      `setting the password of role ${role} needs the CREATEROLE privilege, which ${f.me} does not have: ` +
        `${admin} to run \`ALTER ROLE ${role} LOGIN PASSWORD '…'\`, ${again} without --password-env. ` +
        "Nothing was changed.",
    );
  if (f.role_is_super || f.role_is_owner || role === f.me || role === f.owner)
    throw new MissingPrivilegeError(
      `role ${role} is a superuser or owns the schema's tables: grants cannot restrict it; ` +
        "name a role of its own. Nothing was changed.",
    );
  if (f.not_mine.length > 0)
    throw new MissingPrivilegeError(
      `${f.me} does not own ${f.not_mine.join(", ")} in schema ${f.schema} (they belong to ${f.owner}), and only ` +
        `an owner's grants take effect: run \`ledger-sync ${command}\` with the DATABASE_URL that runs migrate. ` +
        "Nothing was changed.",
    );
  if (!f.role_connects && !f.connect_grantable)
    throw new MissingPrivilegeError(
      `${role} may not connect to database ${f.database}, and granting CONNECT needs ownership of the database ` +
        `(or CONNECT WITH GRANT OPTION), which ${f.me} does not have: ask its owner to run ` +
        `\`GRANT CONNECT ON DATABASE ${f.database} TO ${role}\`, ${again}. Nothing was changed.`,
    );
  if (!f.role_uses_schema && !f.usage_grantable && !f.owner_of_schema)
    throw new MissingPrivilegeError(
      `granting USAGE on schema ${f.schema} needs its ownership (or USAGE WITH GRANT OPTION), which ${f.me} ` +
        `does not have: ask its owner to run \`GRANT USAGE ON SCHEMA ${f.schema} TO ${role}\`, ${again}. ` +
        "Nothing was changed.",
    );

  const q = quote(role);
  if (!f.role_exists) await tx.$executeRawUnsafe(`CREATE ROLE ${q} NOLOGIN`);
  if (password !== undefined) {
    // The password is sent as a literal here (ALTER ROLE takes no parameters); quote it safely.
    await tx.$executeRawUnsafe(`ALTER ROLE ${q} LOGIN PASSWORD '${password.replaceAll("'", "''")}'`);
  }
  return {
    q,
    schema: quote(f.schema),
    database: quote(f.database),
    owner: quote(f.owner),
    grantConnect: f.connect_grantable,
    grantUsage: f.usage_grantable || f.owner_of_schema,
  };
}

/** CONNECT and USAGE where the command may grant them (prepareRole checked the role has them otherwise). */
export async function grantAccess(tx: Tx, t: GrantTarget): Promise<void> {
  if (t.grantConnect) await tx.$executeRawUnsafe(`GRANT CONNECT ON DATABASE ${t.database} TO ${t.q}`);
  if (t.grantUsage) {
    await tx.$executeRawUnsafe(`GRANT USAGE ON SCHEMA ${t.schema} TO ${t.q}`);
    // No new objects in the schema, whatever was granted before.
    await tx.$executeRawUnsafe(`REVOKE CREATE ON SCHEMA ${t.schema} FROM ${t.q}`);
  }
}

/** Whether `table` exists in the target's schema (grants on a missing one would fail). */
export async function tableExists(tx: Tx, t: GrantTarget, table: string): Promise<boolean> {
  const [row] = await tx.$queryRawUnsafe<{ t: string | null }[]>(
    `SELECT to_regclass($1)::text AS t`,
    `${t.schema}.${quote(table)}`,
  );
  return Boolean(row?.t);
}
