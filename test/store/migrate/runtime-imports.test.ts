// Nothing the product runs imports Prisma's schema engine: it is development tooling
// (scripts/schema-engine), installed as a dev dependency only. (@prisma/driver-adapter-utils, the
// adapters' interface, is a dependency: the console's read-only adapter implements it.)
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repo } from "./helpers.ts";

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name) && !join(e.parentPath, e.name).includes("/generated/"))
    .map((e) => join(e.parentPath, e.name));
}

describe("run-time code and the schema engine", () => {
  it("src/ and bin/ import neither the engine nor scripts/schema-engine", async () => {
    const files = [...(await sourceFiles(join(repo, "src"))), ...(await sourceFiles(join(repo, "bin")))];
    expect(files.length).toBeGreaterThan(100);
    const offenders: string[] = [];
    for (const file of files) {
      const text = await readFile(file, "utf8");
      if (/@prisma\/schema-engine-wasm|schema-engine\//.test(text)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });

  it("package.json installs the engine as a dev dependency only", async () => {
    const pkg = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const name of ["@prisma/schema-engine-wasm"]) {
      expect(pkg.dependencies[name], name).toBeUndefined();
      expect(pkg.devDependencies[name], name).toBeDefined();
    }
  });
});
