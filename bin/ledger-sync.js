#!/usr/bin/env node
// Runs the compiled build (dist/, made by `npm run build`; `npm ci` makes it) when it matches the
// sources, else the TypeScript sources through tsx: the command works right after any install, and
// an edited source is never shadowed by an older build (scripts/dist.js).
import { distIsCurrent } from "../scripts/dist.js";

if (distIsCurrent()) {
  await import("../dist/cli/main.js");
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
