// A PostgreSQL of our own on loopback for the demo, the tests and the benchmarks: the server
// binaries shipped in node_modules, the data under `.data/<name>` (reused on the next run), run by
// whichever user can (placement.ts). Every failure is a LocalServiceError of one line.
import { bundledBinaries } from "./binaries.ts";
import { initCluster, PASSWORD, startCluster } from "./cluster.ts";
import { placeCluster } from "./placement.ts";

export { LocalServiceError } from "../errors.ts";

export interface LocalPostgres {
  url: string;
  /** Where the data is, for a person: `.data/demo-postgres`, plus the real place when relocated. */
  where: string;
  stop(): Promise<void>;
}

export async function startLocalPostgres(dataDir: string, port: number, settings: Record<string, string> = {}): Promise<LocalPostgres> {
  const placement = placeCluster(dataDir, bundledBinaries());
  await initCluster(placement);
  const cluster = await startCluster(placement, port, settings);
  return {
    url: `postgresql://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`,
    where: placement.relocatedTo ? `${dataDir} (a link to ${placement.relocatedTo}, which the postgres user can reach)` : dataDir,
    stop: () => cluster.stop(),
  };
}
