// `audit-report --format html`: one standalone page to print or archive, in the statement's style.
// Inline CSS, no script and no external asset, so it renders the same offline years later; every
// value is HTML-escaped, since bill fields, reasons and names are whatever the exchange or a user sent.
import { escapeHtml, htmlPage } from "../../statement/format-html.ts";
import type { AuditReport } from "./report.ts";
import { auditSections, heading, rangeLine, type Section, type Table } from "./sections.ts";

const CSS = `
body { font: 11pt/1.4 system-ui, sans-serif; margin: 2em; color: #111; }
h1 { font-size: 15pt; margin: 0 0 .2em; } h2 { font-size: 13pt; margin: 1.6em 0 .4em; }
h3 { font-size: 11pt; margin: 1em 0 .3em; }
p.range, p.about, p.note { color: #444; margin: 0 0 .8em; }
table { border-collapse: collapse; margin: .3em 0 .8em; }
th, td { border: 1px solid #bbb; padding: .2em .6em; vertical-align: top; overflow-wrap: anywhere; }
th { background: #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; font-family: ui-monospace, monospace; \
white-space: nowrap; }
@media print { body { margin: 0; } }
`;

const cell = (text: string, numeric = false) => `<td${numeric ? ' class="num"' : ""}>${escapeHtml(text)}</td>`;

function table(t: Table): string {
  const caption = t.caption ? `<h3>${escapeHtml(t.caption)}</h3>\n` : "";
  if (t.rows.length === 0) return `${caption}<p class="note">${escapeHtml(t.empty)}</p>`;
  // A table of few rows and many wide columns (the closes) reads down: one column per row.
  if (t.records)
    return `${caption}<table>\n${t.columns
      .map(
        (c, i) => `<tr><th>${escapeHtml(c.header)}</th>${t.rows.map((r) => cell(r[i] ?? "", c.right)).join("")}</tr>`,
      )
      .join("\n")}\n</table>`;
  const header = `<tr>${t.columns.map((c) => `<th>${escapeHtml(c.header)}</th>`).join("")}</tr>`;
  const rows = t.rows.map((r) => `<tr>${t.columns.map((c, i) => cell(r[i] ?? "", c.right)).join("")}</tr>`);
  return `${caption}<table>\n${header}\n${rows.join("\n")}\n</table>`;
}

function section(s: Section): string {
  return `<section>
<h2>${escapeHtml(s.title)}</h2>
<p class="about">${escapeHtml(s.about)}</p>
${s.tables.map(table).join("\n")}
${s.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join("\n")}
</section>`;
}

export function formatAuditHtml(r: AuditReport): string {
  return htmlPage(heading(r), CSS, rangeLine(r), auditSections(r).map(section).join("\n"));
}
