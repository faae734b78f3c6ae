// Compiles src/ to dist/ with tsc (tsconfig.build.json), for `ledger-sync` to run as plain
// JavaScript: registering tsx at run time costs the CLI ~30 MB of resident memory (tsx runs its
// loader hooks on a thread of their own) and the transpiling at every start.
//
//   node scripts/build.js                   build (`npm run build`)
//   node scripts/build.js --if-typescript   the same, but only a note when typescript is not
//                                           installed: `prepare` runs this, and the CLI then runs
//                                           the sources through tsx
//
// It emits without type checking (--noCheck; the output is the same): checking is the job of
// `npm run typecheck` and `npm test`, and `npm ci --omit=dev` must still build. There typescript
// is installed (a peer dependency of runtime dependencies) but not the @types packages.
//
// The new build is written next to dist/ and swapped in at the end, so a failed build leaves the
// previous one (which the CLI only uses while it still matches src/: see scripts/dist.js).
import { execFileSync } from "node:child_process";
import { rmSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { DIST_DIR, MANIFEST_FILE, ROOT, sourceManifest } from "./dist.js";

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch {
  if (!process.argv.includes("--if-typescript")) throw new Error("typescript is not installed: run `npm ci` first");
  process.stdout.write("ledger-sync: typescript is not installed, no build; the CLI runs the sources through tsx\n");
  process.exit(0);
}

// Recorded before compiling: a source changed during the build then leaves it stale, not wrong.
const manifest = sourceManifest();
const next = `${DIST_DIR}.next-${process.pid}`;
const old = `${DIST_DIR}.old-${process.pid}`;
rmSync(next, { recursive: true, force: true });
try {
  execFileSync(process.execPath, [tsc, "-p", join(ROOT, "tsconfig.build.json"), "--noCheck", "--outDir", next], {
    stdio: "inherit",
    cwd: ROOT,
  });
} catch {
  rmSync(next, { recursive: true, force: true });
  process.stderr.write("ledger-sync: build failed (dist/ left as it was)\n");
  process.exit(1);
}
writeFileSync(join(next, MANIFEST_FILE), JSON.stringify(manifest));
try {
  renameSync(DIST_DIR, old);
} catch (err) {
  if (err.code !== "ENOENT") throw err;
}
renameSync(next, DIST_DIR);
rmSync(old, { recursive: true, force: true });
