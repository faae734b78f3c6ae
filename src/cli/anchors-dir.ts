// The anchors directory a command uses: --anchors, else ANCHOR_DIR, else none. It must exist and be a
// directory: a mistyped path must not quietly become a new, empty anchors directory (verify would
// find no anchors there, and close would anchor where nobody looks).
import { statSync } from "node:fs";
import type { Config } from "../config/index.ts";
import { CliExit, EXIT } from "./exit-codes.ts";

export function anchorsDir(flag: string | undefined, config: Config): string | undefined {
  const dir = flag ?? config.anchors.dir;
  if (dir === undefined) return undefined;
  const named = flag !== undefined ? "--anchors" : "ANCHOR_DIR";
  if (dir.trim() === "") throw new CliExit(EXIT.usage, `${named} must not be empty`);
  let isDirectory = false;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch {
    throw new CliExit(EXIT.usage, `${named} ${dir} does not exist: make the anchors directory first`);
  }
  if (!isDirectory) throw new CliExit(EXIT.usage, `${named} ${dir} is not a directory`);
  return dir;
}
