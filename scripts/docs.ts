// `npm run docs`: writes the reference pages generated from the code, docs/configuration.md (from
// src/config/env-docs.ts) and docs/cli.md (from the commands' own help). `npm run docs -- --check`
// writes nothing and exits 1 naming each committed page that differs, as CI runs it.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { referencePages, stalePages } from "./docs/reference-pages.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const args = process.argv.slice(2);
const bad = args.find((a) => a !== "--check");
if (bad !== undefined) {
  process.stderr.write(`docs: unknown argument ${bad} (usage: npm run docs [-- --check])\n`);
  process.exit(2);
}

const pages = referencePages();
const stale = await stalePages(ROOT, pages);
if (args.includes("--check")) {
  for (const s of stale) process.stderr.write(`docs: ${s.path} ${s.why}: run \`npm run docs\` and commit it\n`);
  process.exitCode = stale.length === 0 ? 0 : 1;
} else {
  for (const page of pages) {
    const changed = stale.some((s) => s.path === page.path);
    if (changed) await writeFile(join(ROOT, page.path), page.text);
    const lines = page.text.split("\n").length - 1;
    process.stdout.write(`docs: ${page.path} ${changed ? "written" : "up to date"} (${lines} lines)\n`);
  }
}
