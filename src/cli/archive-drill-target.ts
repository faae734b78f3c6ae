// `archive drill`'s restore target when no --into is given: a PostgreSQL of its own, started for the
// drill from the server binaries shipped in node_modules (src/local-services/postgres, as the demo and
// the tests start theirs) on a free loopback port, its data in a new temporary directory; stopped and
// removed when the drill ends, whatever its end. Here, not in src/archive: the domain may not start
// servers (docs/design/house-style.md, Layers), so the drill takes this as its `throwaway` target.
// Root runs the server as the `postgres` user (placement.ts): the temporary directory is opened to it
// (0755) so the data stays where it was made; should the placement still move it (a link to
// /var/lib/ledger-sync/clusters/...), the moved data goes too.
import { chmod, lstat, mkdtemp, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { RestoreTarget } from "../archive/drill/drill-types.ts";
import { freePort } from "../local-services/free-port.ts";
import { startLocalPostgres } from "../local-services/postgres/index.ts";

const DATABASE = "ledger_drill";

export async function throwawayTarget(progress: (line: string) => void): Promise<RestoreTarget> {
  const parent = await mkdtemp(join(tmpdir(), "ledger-sync-drill-"));
  const dataDir = join(parent, "postgres");
  const remove = () => removeCluster(parent, dataDir);
  let stop: () => Promise<void> = async () => undefined;
  try {
    await chmod(parent, 0o755);
    const port = await freePort();
    progress(`starting a throwaway PostgreSQL on 127.0.0.1:${port} (data in ${dataDir})`);
    const local = await startLocalPostgres(dataDir, port, {
      // Nothing here outlives the drill: a crash loses nothing that matters.
      settings: { fsync: "off", synchronous_commit: "off", full_page_writes: "off" },
      instead: "give --into URL, an empty database on a PostgreSQL server of your own",
    });
    stop = local.stop;
    const admin = new pg.Client({ connectionString: local.url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await admin.end().catch(() => undefined);
    }
    const url = new URL(local.url);
    url.pathname = `/${DATABASE}`;
    return {
      url: url.toString(),
      describe: `a throwaway local PostgreSQL (127.0.0.1:${port}/${DATABASE}, removed after the drill)`,
      release: async () => {
        try {
          await stop();
        } finally {
          await remove();
        }
      },
    };
  } catch (err) {
    await stop().catch(() => undefined);
    await remove();
    throw err;
  }
}

/** Removes the temporary directory, and the cluster's real directory if placement moved it elsewhere. */
async function removeCluster(parent: string, dataDir: string): Promise<void> {
  const link = await lstat(dataDir).catch(() => undefined);
  if (link?.isSymbolicLink()) {
    const target = await readlink(dataDir);
    await rm(target, { recursive: true, force: true });
    await rm(`${target}.link`, { force: true });
  }
  await rm(parent, { recursive: true, force: true });
}
