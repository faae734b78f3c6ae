// Money arithmetic is exact: every module of src/ takes Decimal from src/store/numeric.ts (decimal.js
// at its widest precision), never decimal.js's default, which rounds each result to 20 significant
// digits. The sandbox keeps its own wide clone (it stands for the exchange, not for our books).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { numericSum, numericText } from "../../src/statement/numeric-text.ts";
import { Decimal } from "../../src/store/numeric.ts";

const SRC = resolve("src");
const ALLOWED = new Set(["store/numeric.ts", "sandbox/amounts.ts"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "generated" ? [] : sourceFiles(path);
    return e.name.endsWith(".ts") ? [path] : [];
  });
}

describe("exact decimals", () => {
  it("no file of src/ but store/numeric.ts (and the sandbox's) imports decimal.js", () => {
    const importing = sourceFiles(SRC)
      .filter((f) => /from\s+["']decimal\.js["']/.test(readFileSync(f, "utf8")))
      .map((f) => relative(SRC, f));
    expect(importing.filter((f) => !ALLOWED.has(f))).toEqual([]);
  });

  it("sums and differences keep every digit, past decimal.js's default 20", () => {
    expect(numericSum(["1000.5", "0.000000000123456789"])).toBe("1000.500000000123456789");
    expect(numericSum(["123456789012345678901234.5", "0.000000000000000001"])).toBe(
      "123456789012345678901234.500000000000000001",
    );
    const a = "99999999999999999999.99999999";
    expect(numericText(new Decimal(a).minus("0.00000001"), [a])).toBe("99999999999999999999.99999998");
    expect(new Decimal("1000000000000.000000000000000001").eq("1000000000000")).toBe(false);
  });
});
