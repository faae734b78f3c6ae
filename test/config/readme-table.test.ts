// The README's configuration table and the config schema list the same variables.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { envSchema } from "../../src/config/env-schema.ts";

describe("README configuration table", () => {
  it("documents exactly the variables the configuration accepts", () => {
    const readme = readFileSync("README.md", "utf8");
    const section = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("## Commands"));
    const documented = [...section.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]).sort();
    expect(documented).toEqual(Object.keys(envSchema.shape).sort());
  });
});
