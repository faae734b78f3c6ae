// Tables for the terminal and docs/benchmarks.md. Each item is one section between markers, so a
// run of some items (--only) replaces their sections and keeps the others as they were.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { ITEMS, USAGE } from "./args.ts";

export type Row = [measure: string, result: string];

export interface Section {
  id: string;
  title: string;
  /** The command line that produced it. */
  command: string;
  /** Machine, versions, date (machine.ts). */
  machine: string;
  rows: Row[];
  /** How it is measured: formulas, what is and is not included. */
  method: string[];
}

/** Items in the order they appear in the document. */
/** Every item has its section, in the order of the items (verify had been left out, so never written). */
export const SECTION_ORDER: readonly string[] = ITEMS;

const HEADER = `# Benchmarks

Figures, not tests: \`npm run bench\` prints them and writes this file; nothing asserts on them.
Each section names the command and the machine that produced it (with the load average when it
started: timings taken on a busy machine are distorted). \`--only\` reruns some items and keeps
the other sections as they were; without size flags every item runs at the sizes of issue 8, and
a section run at another size says so.

\`\`\`
${USAGE}
\`\`\`

PostgreSQL: \`BENCH_DATABASE_URL\` or \`TEST_DATABASE_URL\` (an admin URL; each item creates fresh
databases and drops them), else an embedded server under \`.data/bench-postgres\`. Redis (freshness,
scaling): \`BENCH_REDIS_URL\` or \`TEST_REDIS_URL\` (keys under a fresh prefix, deleted after), else
a local \`redis-server\`.
`;

export function table(rows: Row[]): string {
  return ["| measure | result |", "|---|---|", ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join("\n");
}

export function renderSection(s: Section): string {
  return [
    `## ${s.title}`,
    "",
    `Command: \`${s.command}\``,
    "",
    `Machine: ${s.machine}`,
    "",
    table(s.rows),
    "",
    "How it is measured:",
    "",
    ...s.method.map((m) => `- ${m}`),
  ].join("\n");
}

/** Plain text for the terminal. */
export function printSection(s: Section): void {
  const width = Math.max(...s.rows.map(([k]) => k.length));
  const lines = [`\n== ${s.title} ==`, s.machine, ...s.rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)];
  process.stdout.write(`${lines.join("\n")}\n`);
}

const begin = (id: string) => `<!-- bench:${id} -->`;
const end = (id: string) => `<!-- /bench:${id} -->`;

/** Replaces the given sections in the document, keeping the others; writes it. */
export function updateDocument(path: string, sections: Section[]): void {
  const old = existsSync(path) ? readFileSync(path, "utf8") : "";
  const kept = new Map<string, string>();
  for (const id of SECTION_ORDER) {
    const from = old.indexOf(begin(id));
    const to = old.indexOf(end(id));
    if (from >= 0 && to > from) kept.set(id, old.slice(from + begin(id).length, to).trim());
  }
  for (const s of sections) kept.set(s.id, renderSection(s));
  const body = SECTION_ORDER.filter((id) => kept.has(id)).map((id) => `${begin(id)}\n${kept.get(id)}\n${end(id)}`);
  writeFileSync(path, `${HEADER}\n${body.join("\n\n")}\n`);
}

// Number formatting shared by the sections.
export const int = (n: number) => Math.round(n).toLocaleString("en-US");
export const sec = (s: number) => `${s.toFixed(2)} s`;
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
export const ratio = (r: number) => `${r.toFixed(2)}x`;
export const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(0)}%` : "-");
