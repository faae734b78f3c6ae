// Golden files: an export compared byte for byte with the file committed under test/export/golden/.
// UPDATE_GOLDEN=1 writes the files instead (then review the diff before committing it).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";

const GOLDEN_DIR = join(import.meta.dirname, "golden");

export function expectGolden(name: string, actual: string): void {
  const path = join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === "1") writeFileSync(path, actual);
  if (!existsSync(path)) throw new Error(`no golden file ${name}: run UPDATE_GOLDEN=1 npx vitest run test/export`);
  const expected = readFileSync(path, "utf8");
  if (actual === expected) return;
  // The first line that differs, rather than a diff of the whole file.
  const [a, e] = [actual.split("\n"), expected.split("\n")];
  const i = a.findIndex((line, n) => line !== e[n]);
  const at = i === -1 ? a.length : i;
  expect(
    { line: at + 1, actual: a[at], lines: a.length },
    `${name} differs from its golden file (UPDATE_GOLDEN=1 rewrites it)`,
  ).toEqual({ line: at + 1, actual: e[at], lines: e.length });
}
