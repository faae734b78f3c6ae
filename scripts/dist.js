// The compiled build in dist/ and whether it still matches src/. Plain JavaScript: bin/ledger-sync.js
// asks this before anything TypeScript can be loaded.
//
// The build (scripts/build.js) records every file under src/ with its size and modification time
// in dist/sources.json. dist/ is current only while src/ holds exactly those files, unchanged:
// an edit, a checkout, a regenerated Prisma client, a new or deleted file all make it stale, and
// the CLI then runs the sources through tsx instead, so nobody ever runs an outdated build.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const SRC_DIR = join(ROOT, "src");
export const DIST_DIR = join(ROOT, "dist");
export const MANIFEST_FILE = "sources.json";

/** Every file under `src` (relative path, sorted) with its size and modification time. */
export function sourceManifest(src = SRC_DIR) {
  const files = {};
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const s = statSync(path);
    files[relative(src, path)] = `${s.size}:${s.mtimeMs}`;
  }
  return Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** True when dist/ was built from src/ exactly as it is now. */
export function distIsCurrent() {
  let recorded;
  try {
    recorded = readFileSync(join(DIST_DIR, MANIFEST_FILE), "utf8");
  } catch {
    return false;
  }
  return recorded === JSON.stringify(sourceManifest());
}
