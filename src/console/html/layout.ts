// The console's HTML: template literals, and one rule: every value from the database or the request
// goes through `esc` (account names, coins, symbols, reasons and quarantined text are whatever the
// exchange or the operator sent). Markup built here from escaped parts is passed on as `Html`, so a
// cell is either text (escaped when written) or markup this module made. No inline script or style:
// the Content-Security-Policy (headers.ts) allows only the console's own files.
import { escapeHtml } from "../../statement/format-html.ts";

export const esc = escapeHtml;

/** Markup made from escaped parts. */
export interface Html {
  html: string;
}

/** A table cell: text, an exact decimal (right-aligned, monospace), or markup. */
export type Cell = string | number | Html | { num: string };

const isHtml = (c: Cell): c is Html => typeof c === "object" && "html" in c;

function cell(c: Cell): string {
  if (typeof c === "object" && "num" in c) return `<td class="num">${esc(c.num)}</td>`;
  return `<td>${isHtml(c) ? c.html : esc(String(c))}</td>`;
}

export function table(headers: readonly string[], rows: readonly (readonly Cell[])[], id?: string): string {
  if (rows.length === 0) return `<p class="none">none</p>`;
  return `<table${id ? ` id="${esc(id)}"` : ""}>
<thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead>
<tbody>
${rows.map((r) => `<tr>${r.map(cell).join("")}</tr>`).join("\n")}
</tbody>
</table>`;
}

export const link = (href: string, text: string): Html => ({ html: `<a href="${esc(href)}">${esc(text)}</a>` });

/** Text in a <pre>, exactly as given (escaped, white space kept). */
export const pre = (text: string): Html => ({ html: `<pre>${esc(text)}</pre>` });

/** A status word styled by whether it is good news. */
export const badge = (text: string, good: boolean): Html => ({
  html: `<span class="${good ? "ok" : "bad"}">${esc(text)}</span>`,
});

export interface PageOptions {
  /** Where the console is mounted, e.g. "/console". */
  base: string;
  /** Links above the title, e.g. [["accounts", "/console/"]]. */
  trail?: readonly (readonly [string, string])[];
  /** Load the chart library and the script that draws the charts from the page's embedded JSON. */
  charts?: boolean;
}

export function page(title: string, body: string, o: PageOptions): string {
  const trail = (o.trail ?? []).map(([text, href]) => link(href, text).html).join(" / ");
  const scripts = o.charts
    ? `<script src="${esc(o.base)}/assets/uPlot.iife.min.js" defer></script>
<script src="${esc(o.base)}/assets/console.js" defer></script>`
    : "";
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · ledger-sync console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${esc(o.base)}/assets/uPlot.min.css">
<link rel="stylesheet" href="${esc(o.base)}/assets/console.css">
${scripts}
</head>
<body>
<nav>${trail}</nav>
<h1>${esc(title)}</h1>
${body}
<footer>ledger-sync console · read-only · figures exactly as stored; charts plot approximations</footer>
</body>
</html>
`;
}

/** A page with one message, for refusals and errors (no links, no data). */
export function messagePage(title: string, message: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><link rel="icon" href="data:,"></head>
<body><h1>${esc(title)}</h1><p>${esc(message)}</p></body></html>
`;
}

/**
 * Data for the page's script, as JSON inside a non-executed <script type="application/json">. `<`
 * is written as \u003c, so no value can close the element (`</script>`) or open a comment.
 */
export function embedJson(id: string, value: unknown): string {
  const json = JSON.stringify(value).replace(/</g, "\\u003c");
  return `<script type="application/json" id="${esc(id)}">${json}</script>`;
}
