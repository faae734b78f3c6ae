// A PostgreSQL server for benchmarks: BENCH_DATABASE_URL / TEST_DATABASE_URL when set (an admin
// URL on which databases may be created), else an embedded one under .data/bench-postgres.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { startEmbeddedPostgres } from "../src/store/embedded-postgres.ts";

export interface BenchDatabase {
  url: string;
  serverVersion: string;
  drop(): Promise<void>;
  stopServer(): Promise<void>;
}

export async function benchDatabase(): Promise<BenchDatabase> {
  let adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  let stopServer = async () => {};
  if (!adminUrl) {
    const embedded = await startEmbeddedPostgres(".data/bench-postgres", 54339);
    adminUrl = embedded.url;
    stopServer = () => embedded.stop();
  }
  const name = `ls_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const { rows } = await admin.query<{ server_version: string }>("SHOW server_version");
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    serverVersion: rows[0]?.server_version ?? "?",
    stopServer,
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}
