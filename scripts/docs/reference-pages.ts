// The reference pages generated from the code, and which committed copies differ from them.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { cliPage } from "./cli-page.ts";
import { configurationPage } from "./configuration-page.ts";

export interface Page {
  /** Relative to the repository root. */
  path: string;
  text: string;
}

export function referencePages(): Page[] {
  return [
    { path: "docs/configuration.md", text: configurationPage() },
    { path: "docs/cli.md", text: cliPage() },
  ];
}

/** The pages whose file under `root` is missing or differs from `pages`, each with why. */
export async function stalePages(root: string, pages: Page[]): Promise<{ path: string; why: string }[]> {
  const stale: { path: string; why: string }[] = [];
  for (const page of pages) {
    const committed = await readFile(join(root, page.path), "utf8").catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
    if (committed === undefined) stale.push({ path: page.path, why: "is missing" });
    else if (committed !== page.text) {
      const line = firstDiff(committed, page.text);
      stale.push({ path: page.path, why: `differs from what the code generates (first at line ${line})` });
    }
  }
  return stale;
}

function firstDiff(a: string, b: string): number {
  const x = a.split("\n");
  const y = b.split("\n");
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i + 1;
}
