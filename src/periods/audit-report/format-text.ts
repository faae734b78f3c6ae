// `audit-report --format text`: the sections one after the other, for a terminal or a plain-text
// mail. Tables are aligned (figures right-aligned, never rounded to fit); a table too wide for a
// terminal (the closes, with their hashes) is written as one block of `label: value` lines per row.
import { textTable } from "../../statement/text-table.ts";
import type { AuditReport } from "./report.ts";
import { auditSections, heading, rangeLine, type Table } from "./sections.ts";

const WIDTH = 100;

/** Words wrapped at WIDTH, each line indented. */
function wrap(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && indent.length + line.length + 1 + word.length > WIDTH) {
      lines.push(indent + line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  return line === "" ? lines : [...lines, indent + line];
}

function tableLines(t: Table): string[] {
  const out = t.caption ? [`  ${t.caption}:`] : [];
  if (t.rows.length === 0) return [...out, `    ${t.empty}`];
  if (!t.records) return [...out, ...textTable(t.columns, t.rows, "    ")];
  const width = Math.max(...t.columns.map((c) => c.header.length));
  return [
    ...out,
    ...t.rows.flatMap((row, i) => [
      ...(i > 0 ? [""] : []),
      ...t.columns.map((c, j) => `    ${`${c.header}:`.padEnd(width + 1)} ${row[j] ?? ""}`.trimEnd()),
    ]),
  ];
}

export function formatAuditText(r: AuditReport): string {
  const out = [heading(r), rangeLine(r)];
  for (const s of auditSections(r)) {
    out.push("", s.title, ...wrap(s.about, "  "));
    for (const t of s.tables) out.push("", ...tableLines(t));
    if (s.notes.length > 0) out.push("", ...s.notes.flatMap((n) => wrap(n, "  ")));
  }
  return `${out.join("\n")}\n`;
}
