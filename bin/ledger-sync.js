#!/usr/bin/env node
// Runs the compiled build (dist/, made by `npm run build`; `npm ci` makes it) when it matches the
// sources, else the TypeScript sources through tsx: the command works right after any install, and
// an edited source is never shadowed by an older build (scripts/dist.js).
import { setFlagsFromString } from "node:v8";
import { distIsCurrent } from "../scripts/dist.js";

// V8 settings for a process whose resident memory must stay low and flat (issue 8: a 1,000,000-bill
// backfill within 150 MB). They are set here, not on a node command line, so that every way of
// starting the CLI gets them: `node bin/ledger-sync.js` (Docker image, tests, benchmarks),
// `npx ledger-sync`. V8 reads both each time they apply (compiling a WebAssembly module, sizing the
// old generation after a full GC), so set before any of our code runs they take full effect, as
// measured; heap *size* flags, by contrast, are fixed at start-up and cannot be set from here.
//
// 1. WebAssembly stays on its baseline compiler (Liftoff), with no tier-up, dynamic or eager, to
//    TurboFan. Prisma's query compiler is a 3.4 MB wasm module: optimising its hot functions
//    added ~50 MB resident to a backfill and to every one-shot command, and bought no measurable
//    speed per query (findUnique, findMany, raw queries alike). `snapshot --once` became faster
//    (no optimising compile at start-up: CPU 7 s -> 4.5 s over five runs).
// 2. The old generation may grow to 1.5x its live size before the next full GC. V8's own factor
//    reaches 4x on machines with a large heap limit; a backfill's live heap is ~25 MB but it
//    promotes ~350 bytes of short-lived data per bill, so ~100 MB of garbage piled up in the old
//    generation before each full GC. At 1.5x: peak -50 MB, CPU time within run-to-run noise.
setFlagsFromString("--no-wasm-tier-up");
setFlagsFromString("--no-wasm-dynamic-tiering");
setFlagsFromString("--heap-growing-percent=50");

if (distIsCurrent()) {
  await import("../dist/cli/main.js");
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
