// `statement --format html`: one standalone page to print or archive. Inline CSS, no script and no
// external asset, so it renders the same offline years later; every value is HTML-escaped, since
// coin names, business types and symbols are whatever the exchange sent.
import type { CoinStatement, Statement } from "./statement.ts";
import type { Mark } from "./rollforward.ts";
import { markWord, rollForwardLines, rollForwardSummary } from "./rollforward-wording.ts";
import { chainSentence, collateralSentences, figureLines, heading, rangeLine } from "./wording.ts";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const CSS = `
body { font: 11pt/1.4 system-ui, sans-serif; margin: 2em; color: #111; }
h1 { font-size: 15pt; margin: 0 0 .2em; } h2 { font-size: 13pt; margin: 1.6em 0 .4em; }
p.range, p.note { color: #444; margin: 0 0 1em; }
table { border-collapse: collapse; margin: .3em 0 .8em; }
th, td { border: 1px solid #bbb; padding: .2em .6em; vertical-align: top; }
th { background: #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; font-family: ui-monospace, monospace; \
white-space: nowrap; }
tr.total td { font-weight: bold; }
.ok { color: #064; font-weight: bold; } .broken { color: #a00; font-weight: bold; }
.unreconcilable { color: #850; font-weight: bold; }
@media print { body { margin: 0; } section { break-inside: avoid; } }
`;

const cell = (text: string, numeric = false) => `<td${numeric ? ' class="num"' : ""}>${escapeHtml(text)}</td>`;
const MARK_CLASS: Record<Mark, string> = { tied: "ok", "not tied": "broken", unreconcilable: "unreconcilable" };
const mark = (m: Mark) => `<span class="${MARK_CLASS[m]}">${markWord(m)}</span>`;

function rollForwardTable(c: CoinStatement): string {
  const rows = rollForwardLines(c)
    .map(
      (l) =>
        `<tr><th>${escapeHtml(l.label)}</th><td>${mark(l.mark)}</td>${cell(l.figures)}` +
        `${cell(l.difference ?? "", true)}${cell(l.reason ?? "")}</tr>`,
    )
    .join("\n");
  return `<p>roll-forward: ${mark(c.rollForward.status)}</p>
<table>
<tr><th>equality</th><th>mark</th><th>figures</th><th>difference</th><th>reason</th></tr>
${rows}
</table>`;
}

function coinSection(c: CoinStatement): string {
  const movementRows = c.movements
    .map(
      (m) =>
        `<tr>${cell(m.businessType)}${cell(String(m.bills), true)}${cell(m.amount, true)}${cell(m.fillFee, true)}</tr>`,
    )
    .join("\n");
  const figureRows = figureLines(c)
    .map(([l, v, n]) => `<tr><th>${escapeHtml(l)}</th>${cell(v, true)}${cell(n)}</tr>`)
    .join("\n");
  const collateral = collateralSentences(c)
    .map((x) => `<p class="note">${escapeHtml(x.label)}: ${escapeHtml(x.text)}</p>`)
    .join("\n");
  return `<section>
<h2>${escapeHtml(c.coin)}</h2>
<table>
<tr><th>business type</th><th>bills</th><th>amount</th><th>fill fee</th></tr>
${movementRows}
<tr class="total">${cell("total")}${cell(String(c.total.bills), true)}\
${cell(c.total.amount, true)}${cell(c.total.fillFee, true)}</tr>
</table>
<table>
${figureRows}
</table>
<p>balance chain: <span class="${c.chain.ok ? "ok" : "broken"}">${escapeHtml(chainSentence(c))}</span></p>
${collateral}
${rollForwardTable(c)}
</section>`;
}

/** A whole self-contained page: its title as heading, a line saying the range, then `body`. */
export function htmlPage(title: string, css: string, range: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>${css}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="range">${escapeHtml(range)}</p>
${body}
</body>
</html>
`;
}

export function formatStatementHtml(s: Statement): string {
  const coins =
    s.coins.length === 0
      ? '<p class="note">no coin has a bill before the end of the period</p>'
      : s.coins.map(coinSection).join("\n");
  const note = s.collateralNote ? `<p class="note">${escapeHtml(s.collateralNote)}</p>` : "";
  return htmlPage(heading(s), CSS, rangeLine(s), `${coins}\n${note}\n<p>${escapeHtml(rollForwardSummary(s))}</p>`);
}
