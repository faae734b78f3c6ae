// A scratch project directory for runs of the demo or the tests, and its removal: as root in a
// private directory the local PostgreSQL's data lives under /var/lib/ledger-sync with a link in
// `.data`, and goes with the directory.
import { existsSync, lstatSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";

export function removeProjectDir(dir: string): void {
  const data = join(dir, ".data");
  for (const name of existsSync(data) ? readdirSync(data) : []) {
    const link = join(data, name);
    if (!lstatSync(link).isSymbolicLink()) continue;
    const target = readlinkSync(link);
    rmSync(target, { recursive: true, force: true });
    rmSync(`${target}.link`, { force: true });
  }
  rmSync(dir, { recursive: true, force: true });
}
