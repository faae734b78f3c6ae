// The console's first page: the fleet as `ledger-sync status` lists it (store/accounts/overview.ts),
// failing first, then the most behind, PAGE_SIZE a page: each account's state, lag, last success,
// days of history left, requests per bills run, last verify and quarantine, linking to its page.
// Filters (name text, state) and pages are plain links and a GET form, so the page needs no script.
import type { FleetPage, FleetState } from "../../store/accounts/overview.ts";
import { FLEET_STATES } from "../../store/accounts/overview.ts";
import { accountsHref, PAGE_SIZE, type AccountsQuery } from "../accounts-query.ts";
import type { FleetSettings } from "../fleet-settings.ts";
import { badge, esc, link, page, table, type Cell } from "./layout.ts";
import { historyLeft, iso, lagText, requestsText, stateBadge, verifyBadge } from "./words.ts";

export interface AccountsView {
  fleet: FleetPage;
  query: AccountsQuery;
  settings: FleetSettings;
}

function filterForm(v: AccountsView, base: string): string {
  const options = [["", "every state"], ...FLEET_STATES.map((s) => [s, s])]
    .map(([value, text]) => {
      const selected = (v.query.state ?? "") === value ? " selected" : "";
      return `<option value="${esc(value!)}"${selected}>${esc(text!)}</option>`;
    })
    .join("");
  return `<form method="get" action="${esc(`${base}/`)}" class="filter" id="filter">
<label>name contains <input type="search" name="q" value="${esc(v.query.search ?? "")}" maxlength="64"></label>
<label>state <select name="state">${options}</select></label>
<button type="submit">filter</button>
</form>`;
}

/** "every (1000) · failing (3) · ...": each a link keeping the name filter; the current one in bold. */
function stateLinks(v: AccountsView, base: string): string {
  const counts = v.fleet.counts;
  const all = FLEET_STATES.reduce((n, s) => n + counts[s], 0);
  const entries: [FleetState | undefined, string][] = [
    [undefined, `every state (${all})`],
    ...FLEET_STATES.map((s): [FleetState, string] => [s, `${s} (${counts[s]})`]),
  ];
  const links = entries.map(([state, text]) =>
    state === v.query.state
      ? `<strong>${esc(text)}</strong>`
      : link(accountsHref(base, v.query, { state, page: 1 }), text).html,
  );
  return `<p id="states">${links.join(" · ")}</p>`;
}

function pager(v: AccountsView, base: string): string {
  const pages = Math.max(1, Math.ceil(v.fleet.total / PAGE_SIZE));
  const at = v.query.page;
  const to = (page: number, text: string, rel: string) =>
    `<a href="${esc(accountsHref(base, v.query, { page }))}" rel="${rel}">${esc(text)}</a>`;
  const parts = [
    at > 1 ? to(1, "« first", "first") : "",
    at > 1 ? to(Math.min(at - 1, pages), "‹ previous", "prev") : "",
    `<span>page ${at} of ${pages}</span>`,
    at < pages ? to(at + 1, "next ›", "next") : "",
    at < pages ? to(pages, "last »", "last") : "",
  ].filter(Boolean);
  return `<nav class="pages" id="pages">${parts.join(" ")}</nav>`;
}

function summary(v: AccountsView): string {
  const { fleet, settings } = v;
  const from = (v.query.page - 1) * PAGE_SIZE;
  const shown = fleet.accounts.length === 0 ? "none" : `${from + 1}-${from + fleet.accounts.length}`;
  const seconds = Math.round(settings.billsIntervalMs / 1000);
  const over = fleet.total === 1 ? "this account" : `these ${fleet.total} accounts`;
  return `<p id="summary">Accounts ${shown} of ${fleet.total} (failing first, then by lag; disabled last). About ${esc(
    requestsText(fleet.requestsPerRun),
  )} requests per bills run (every ${seconds} s) over ${over}. Stale: bills more than ${esc(
    lagText(settings.staleAfterMs),
  )} behind.</p>`;
}

export function homePage(v: AccountsView, base: string, now: number): string {
  const everything = FLEET_STATES.reduce((n, s) => n + v.fleet.counts[s], 0);
  if (everything === 0 && v.query.search === undefined)
    return page(
      "Accounts",
      `<p>No account has been registered or synced into this database yet (no cursor, no verify, no quarantine).</p>`,
      { base },
    );
  const rows: Cell[][] = v.fleet.accounts.map((a) => [
    link(`${base}/accounts/${encodeURIComponent(a.name)}`, a.name),
    stateBadge(a.state, a.reasons),
    a.cursorMs === null ? "never synced" : lagText(now - a.cursorMs),
    a.lastSuccess ? iso(a.lastSuccess) : "never",
    historyLeft(a.historyDaysLeft),
    { num: requestsText(a.requestsPerRun) },
    verifyBadge(a.verify, a.verifyFailures),
    badge(String(a.quarantined), a.quarantined === 0),
  ]);
  const none = v.fleet.total === 0 ? "matches these filters" : "on this page";
  const listed =
    rows.length === 0
      ? `<p class="none" id="no-accounts">No account ${none}.</p>`
      : table(
          ["account", "state", "lag", "last success", "history left", "requests per run", "last verify", "quarantined"],
          rows,
          "accounts",
        );
  const body = [filterForm(v, base), stateLinks(v, base), summary(v), listed, pager(v, base)].join("\n");
  return page("Accounts", body, { base });
}
