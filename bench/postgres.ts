// PostgreSQL for benchmarks: BENCH_DATABASE_URL / TEST_DATABASE_URL when set (an admin URL on which
// databases may be created), else one embedded server under .data/bench-postgres for the whole
// run. Every benchmark database is fresh, migrated on request, and dropped by its scope.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { startLocalPostgres } from "../src/local-services/postgres/index.ts";
import { migrateDeploy } from "../src/store/migrate/index.ts";
import { runScope, type Cleanup } from "./cleanup.ts";
import { CpuTracker } from "./proc-stats.ts";

export interface BenchDatabase {
  name: string;
  url: string;
}

let server: Promise<{ adminUrl: string; version: string; source: string }> | undefined;

/** The server (started once per run when embedded); its version and where it came from. */
export function benchServer(): Promise<{ adminUrl: string; version: string; source: string }> {
  server ??= (async () => {
    let adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    let source = process.env.BENCH_DATABASE_URL ? "BENCH_DATABASE_URL" : "TEST_DATABASE_URL";
    if (!adminUrl) {
      const embedded = await startLocalPostgres(".data/bench-postgres", 54339, {
        instead: "set BENCH_DATABASE_URL to a PostgreSQL server of your own",
      });
      runScope.add("stop the embedded PostgreSQL", () => embedded.stop());
      adminUrl = embedded.url;
      source = "embedded";
    }
    const { rows } = await adminQuery<{ server_version: string }>(adminUrl, "SHOW server_version");
    return { adminUrl, version: rows[0]?.server_version ?? "?", source };
  })();
  return server;
}

async function adminQuery<T extends pg.QueryResultRow>(url: string, sql: string): Promise<pg.QueryResult<T>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await c.query<T>(sql);
  } finally {
    await c.end();
  }
}

/** A fresh database (migrated unless told otherwise), dropped when `scope` runs. */
export async function benchDatabase(scope: Cleanup, o: { migrate?: boolean } = {}): Promise<BenchDatabase> {
  const { adminUrl } = await benchServer();
  const name = `ls_bench_${randomBytes(4).toString("hex")}`;
  await adminQuery(adminUrl, `CREATE DATABASE "${name}"`);
  scope.add(`drop database ${name}`, () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = { name, url: url.toString() };
  if (o.migrate !== false) await migrateDeploy(db.url);
  return db;
}

/**
 * CPU seconds used by the server processes serving a database, sampled from /proc while `sample()`
 * is called (backends come and go with the connection pool). Needs the server on this machine.
 */
export async function backendCpu(
  database: BenchDatabase,
  scope: Cleanup,
): Promise<{ sample(): Promise<void>; seconds(): number }> {
  const { adminUrl } = await benchServer();
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  scope.add("close the backend-CPU connection", () => c.end());
  const tracker = new CpuTracker();
  const sample = async () => {
    const { rows } = await c.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1", [
      database.name,
    ]);
    tracker.observe(rows.map((r) => r.pid));
  };
  await sample();
  return { sample, seconds: () => tracker.delta() };
}
