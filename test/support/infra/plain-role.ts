// A database owned by a plain role, as managed services hand one out: LOGIN and nothing more
// (NOSUPERUSER NOCREATEDB NOCREATEROLE), owner of the database and of its `public` schema (on
// PostgreSQL 15 `public` belongs to pg_database_owner; owning it outright also covers older servers).
// No password: the test server trusts 127.0.0.1. Dropped with the role by drop().
import { randomBytes } from "node:crypto";
import pg from "pg";

export interface PlainOwnerDatabase {
  role: string;
  name: string;
  /** The database on the server itself, as the admin (for checks the role may not make). */
  adminUrl: string;
  drop(): Promise<void>;
}

async function onServer(url: string, sqls: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const sql of sqls) await client.query(sql);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Creates the role and its database on the server of `adminUrl` (a superuser's URL). */
export async function createPlainOwnerDatabase(adminUrl: string, prefix = "ls_plain"): Promise<PlainOwnerDatabase> {
  const id = randomBytes(5).toString("hex");
  const role = `${prefix}_${id}`;
  const name = `${prefix}_db_${id}`;
  await onServer(adminUrl, [
    `CREATE ROLE "${role}" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS`,
    `CREATE DATABASE "${name}" OWNER "${role}"`,
  ]);
  const dbAdminUrl = withDatabase(adminUrl, name);
  await onServer(dbAdminUrl, [`ALTER SCHEMA public OWNER TO "${role}"`]);
  return {
    role,
    name,
    adminUrl: dbAdminUrl,
    drop: () => onServer(adminUrl, [`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`, `DROP ROLE IF EXISTS "${role}"`]),
  };
}
