// The reference pages (docs/configuration.md, docs/cli.md) are what `npm run docs` generates from the
// code: the environment schema's documentation and the commands' own help.
import { execFile } from "node:child_process";
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.ts";
import { ENV_DOCS, READER_COMMANDS } from "../../src/config/env-docs.ts";
import { envSchema } from "../../src/config/env-schema.ts";
import { helpSections } from "../../scripts/docs/cli-page.ts";
import { referencePages, stalePages } from "../../scripts/docs/reference-pages.ts";
import { runCli } from "../support/cli.ts";

const TSX = resolve("node_modules/.bin/tsx");

function runDocs(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    execFile(TSX, ["scripts/docs.ts", ...args], { env: { ...process.env, ...env } }, (err, _stdout, stderr) =>
      done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stderr }),
    );
  });
}

function commandPaths(command: Command, prefix = ""): string[] {
  return command.commands.flatMap((c) => [`${prefix}${c.name()}`, ...commandPaths(c, `${prefix}${c.name()} `)]);
}

/** GitHub's heading anchor: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

describe("npm run docs", () => {
  it("the committed pages are what the code generates", async () => {
    for (const page of referencePages())
      expect(await readFile(page.path, "utf8"), `${page.path}: run \`npm run docs\``).toBe(page.text);
  });

  it("--check passes on the committed pages whatever the terminal's width and colours", async () => {
    const r = await runDocs(["--check"], { COLUMNS: "40", FORCE_COLOR: "3", TZ: "Pacific/Kiritimati" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("--check names a page that differs and one that is missing, and how to fix them", async () => {
    const root = await mkdtemp(join(tmpdir(), "ls-docs-"));
    try {
      const [configuration, cli] = referencePages();
      await mkdir(join(root, "docs"));
      await writeFile(join(root, configuration!.path), configuration!.text.replace("`REDIS_URL`", "`REDIS`"));
      expect(await stalePages(root, [configuration!, cli!])).toEqual([
        { path: "docs/configuration.md", why: expect.stringMatching(/^differs .*\(first at line \d+\)$/) },
        { path: "docs/cli.md", why: "is missing" },
      ]);
      await writeFile(join(root, cli!.path), cli!.text);
      await writeFile(join(root, configuration!.path), configuration!.text);
      expect(await stalePages(root, [configuration!, cli!])).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("refuses an unknown argument, naming it", async () => {
    const r = await runDocs(["--chek"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown argument --chek");
  });
});

describe("docs/configuration.md", () => {
  let page: string;
  beforeAll(async () => {
    page = await readFile("docs/configuration.md", "utf8");
  });

  it("has a row for exactly the variables the configuration accepts", () => {
    const documented = [...page.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]).sort();
    expect(documented).toEqual(Object.keys(envSchema.shape).sort());
  });

  it("names only commands the program has as readers", () => {
    const paths = commandPaths(buildProgram());
    expect(paths.filter((p) => (READER_COMMANDS as readonly string[]).includes(p))).toEqual([...READER_COMMANDS]);
  });

  it("gives the schema's own defaults: a literal where one applies, words in parentheses where unset is none", () => {
    const defaults = envSchema.parse({}) as Record<string, unknown>;
    for (const [name, doc] of Object.entries(ENV_DOCS)) {
      const value = defaults[name];
      const literal = /^`([^`]+)`/.exec(doc.default);
      if (literal) expect(String(value), name).toBe(literal[1]);
      else if (doc.default.startsWith("("))
        expect([undefined, "[]", "{}"], name).toContain(value === undefined ? undefined : JSON.stringify(value));
    }
  });

  it("links only to pages and headings that exist", async () => {
    const links = [...page.matchAll(/\]\(([^)#]+)(?:#([^)]+))?\)/g)];
    expect(links.length).toBeGreaterThan(0);
    for (const [, file, anchor] of links) {
      const target = await readFile(join(dirname("docs/configuration.md"), file!), "utf8");
      if (anchor === undefined) continue;
      const headings = [...target.matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!));
      expect(headings, `${file}#${anchor}`).toContain(anchor);
    }
  });
});

describe("docs/cli.md", () => {
  const sections = helpSections();

  it("has every command and subcommand, each with a description and every option described", () => {
    const program = buildProgram();
    expect(sections.map((s) => s.path)).toEqual(["ledger-sync", ...commandPaths(program, "ledger-sync ")]);
    const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
    for (const command of all(program)) {
      expect(command.description(), command.name()).not.toBe("");
      for (const option of command.options)
        expect(option.description, `${command.name()} ${option.flags}`).not.toBe("");
    }
  });

  it("is each command's --help exactly as the executable prints it", async () => {
    for (const args of [[], ["accounts", "add"], ["sandbox"]]) {
      const r = await runCli([...args, "--help"]);
      expect(r.code).toBe(0);
      const path = ["ledger-sync", ...args].join(" ");
      expect(sections.find((s) => s.path === path)?.help, path).toBe(r.stdout.trimEnd());
    }
  });
});
