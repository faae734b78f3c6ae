#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=4
// Runs the compiled build (dist/, made by `npm run build`; `npm ci` makes it) when it matches the
// sources, else the TypeScript sources through tsx: the command works right after any install, and
// an edited source is never shadowed by an older build (scripts/dist.js).
import { setFlagsFromString } from "node:v8";
import { distIsCurrent } from "../scripts/dist.js";

// V8 and glibc settings for a process whose resident memory must stay low and flat (issue 8: a
// 1,000,000-bill backfill within 150 MB). Each one's figures: docs/design/process-flags.md.
//
// 1. WebAssembly stays on its baseline compiler (Liftoff), with no tier-up, dynamic or eager, to
//    TurboFan. Optimising the hot functions of Prisma's query compiler (a wasm module) costs
//    resident memory in every command and start-up CPU in every one-shot command, and buys no
//    speed per query.
// 2. The old generation may grow to 1.3x its live size before the next full GC. V8's own factor
//    reaches 4x on machines with a large heap limit, and a backfill promotes short-lived data for
//    every bill: at 4x that garbage piles up in the old generation between full GCs.
// These two are set here, in the process, so that every way of starting the CLI gets them (also
// `node bin/ledger-sync.js`, as tests and benchmarks run it). V8 reads them each time they apply
// (compiling a wasm module; sizing the old generation after a full GC), so set before any of our
// code runs they take full effect.
// Two more are fixed before this file runs, so they are on its first line, which applies when the
// file is executed: npx ledger-sync, the Docker image's entry point, ./bin/ledger-sync.js.
// `node bin/ledger-sync.js` does not read that line; there the environment
// MALLOC_ARENA_MAX=2 NODE_OPTIONS=--max-semi-space-size=4 has the same effect (bench/memory.ts
// starts the CLI so).
// 3. The young generation's semi-spaces stop at 4 MB instead of 16 MB: a lower peak for some CPU
//    time (more scavenges, more promotion). 8 MB would cost no measurable CPU, but would not keep
//    the backfill under 150 MB. A heap size is set when the heap is, hence the first line.
// 4. MALLOC_ARENA_MAX=2: glibc gives each thread that allocates (V8's compiler and GC helpers,
//    libuv's pool) a malloc arena of its own, up to 8 per core, and keeps what is freed in each;
//    two arenas keep less of it, at no measurable CPU cost. Read by glibc when the process starts.
setFlagsFromString("--no-wasm-tier-up");
setFlagsFromString("--no-wasm-dynamic-tiering");
setFlagsFromString("--heap-growing-percent=30");

if (distIsCurrent()) {
  await import("../dist/cli/main.js");
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
