// A PostgreSQL of our own on loopback for the demo, the tests and the benchmarks: the server
// binaries shipped in node_modules, the data under `.data/<name>` (reused on the next run), run by
// whichever user can (placement.ts). Every failure is a LocalServiceError of one line.
import { bundledBinaries } from "./binaries.ts";
import { LocalServiceError } from "../errors.ts";
import { initCluster, PASSWORD, startCluster, type RunningCluster } from "./cluster.ts";
import { placeCluster, type Placement } from "./placement.ts";

export { LocalServiceError };

export interface LocalPostgres {
  url: string;
  /** Where the data is, for a person: `.data/demo-postgres`, plus the real place when relocated. */
  where: string;
  stop(): Promise<void>;
}

export interface LocalPostgresOptions {
  /** Server settings (`-c name=value`), e.g. fsync=off for tests. */
  settings?: Record<string, string>;
  /** The caller's way around a failure, added to its message: another port, a server of one's own. */
  instead: string;
}

export async function startLocalPostgres(
  dataDir: string,
  port: number,
  o: LocalPostgresOptions,
): Promise<LocalPostgres> {
  let placement: Placement;
  let cluster: RunningCluster;
  try {
    placement = placeCluster(dataDir, bundledBinaries());
    await initCluster(placement);
    cluster = await startCluster(placement, port, o.settings);
  } catch (err) {
    throw err instanceof LocalServiceError ? err.or(o.instead) : err;
  }
  return {
    url: `postgresql://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`,
    where: placement.relocatedTo
      ? `${dataDir} (a link to ${placement.relocatedTo}, which the postgres user can reach)`
      : dataDir,
    stop: () => cluster.stop(),
  };
}
