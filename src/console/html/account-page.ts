// An account's page: its state as the accounts page lists it, its streams (cursor, lag, last success,
// last error), the worker's last verify with every open break, its closed periods, its quarantine
// with each record's exact text, and its coins, each linking to the coin's charts.
import type { ClosedPeriodListing } from "../../periods/list-closes.ts";
import type { FleetAccount } from "../../store/accounts/overview.ts";
import type { CoinBalance } from "../read/coins.ts";
import type { AccountQuarantine } from "../read/quarantine.ts";
import { LAST_RUNS_SEARCHED, type AccountStreams } from "../read/streams.ts";
import type { StoredVerify } from "../read/verify-report.ts";
import { badge, link, pre, table, page, esc, type Cell } from "./layout.ts";
import { historyLeft, iso, lagText, requestsText, stateBadge, verifyBadge } from "./words.ts";

export interface AccountView {
  account: string;
  /** Its row of the accounts page (null: known by its bills only). */
  fleet: FleetAccount | null;
  streams: AccountStreams;
  verify: StoredVerify | null;
  closes: ClosedPeriodListing[];
  quarantine: AccountQuarantine;
  coins: CoinBalance[];
}

function stateSection(a: FleetAccount | null): string {
  if (!a) return "";
  const source = a.historySource === "exchange" ? "as learnt from it" : "per EXCHANGE_HISTORY_DAYS";
  const history = a.historySource === null ? "" : ` (the exchange keeps ${a.historyDays!.toFixed(1)} days, ${source})`;
  const runs = a.runsAveraged === 0 ? "no bills run finished yet" : `over its last ${a.runsAveraged} bills runs`;
  const state = stateBadge(a.state, a.reasons).html;
  const left = historyLeft(a.historyDaysLeft).html;
  const requests = esc(`${requestsText(a.requestsPerRun)} (${runs})`);
  const parts = [`State: ${state}`, `History left: ${left}${esc(history)}`, `Requests per bills run: ${requests}`];
  return `<p id="state">${parts.join(". ")}.</p>`;
}

function streamsSection(s: AccountStreams, now: number): string {
  const rows: Cell[][] = s.streams.map((x) => [
    x.stream,
    iso(x.cursorMs),
    lagText(now - x.cursorMs),
    iso(x.lastSuccess),
    x.lastError
      ? { html: `${esc(iso(x.lastError.at))}${pre(x.lastError.error).html}` }
      : `none in the last ${LAST_RUNS_SEARCHED.toLocaleString("en-US")} runs`,
  ]);
  const cross = s.crossCheck
    ? `<p>Last cross-check (${esc(iso(s.crossCheck.at))}): ` +
      `${badge(s.crossCheck.outcome === "ok" ? "pass" : "FAIL", s.crossCheck.outcome === "ok").html}` +
      `${s.crossCheck.error ? ` ${esc(s.crossCheck.error)}` : ""}</p>`
    : "";
  return `<section id="streams"><h2>Streams</h2>
${table(["stream", "cursor", "lag", "last success", "last error"], rows)}
<p>Backfill windows finished: ${s.backfillWindows}.</p>${cross}</section>`;
}

function verifySection(v: StoredVerify | null): string {
  if (!v) return `<section id="verify"><h2>Verify</h2><p>The worker has not verified this account yet.</p></section>`;
  const checks: Cell[][] = v.checks.map((c) => [
    c.check,
    c.subject,
    badge(c.status, c.status === "pass" || c.status === "skipped"),
    c.summary,
  ]);
  const breaks: Cell[][] = v.breaks.map((b) => [
    b.coin,
    b.previousBillId,
    b.billId,
    { num: b.expectedBalance },
    { num: b.actualBalance },
    lagText(b.gapMs),
    `${b.previousAt} → ${b.at}`,
  ]);
  const truncated = v.truncatedCoins.length
    ? `<p class="bad">More breaks exist than the report lists for: ${esc(v.truncatedCoins.join(", "))}. ` +
      "Run <code>ledger-sync verify</code> for all of them.</p>"
    : "";
  return `<section id="verify"><h2>Verify</h2>
<p>Last run ${v.lastRunAt ? esc(iso(v.lastRunAt)) : "never"}: ${verifyBadge(v.outcome, v.failures).html}. \
Continuity proven for every bill before ${esc(iso(v.checkFromMs))}.</p>
${table(["check", "subject", "status", "figures"], checks)}
<h3>Open breaks (${v.breaks.length})</h3>
${table(["coin", "bill before", "bill after", "expected balance", "found balance", "gap", "times"], breaks, "breaks")}
${truncated}</section>`;
}

function closesSection(closes: ClosedPeriodListing[]): string {
  const rows: Cell[][] = closes.map((c) => [
    c.period,
    badge(c.state, c.state === "intact"),
    `${c.bills} sealed, ${c.billsNow} now`,
    c.state === "intact" ? "" : `${c.changes.changed} changed, ${c.changes.added} added, ${c.changes.missing} missing`,
    { html: `<code>${esc(c.digest)}</code>` },
    `${c.closedAt} by ${c.closedBy} (${c.dbUser})`,
  ]);
  return `<section id="closes"><h2>Closed periods</h2>
${table(["period", "state", "bills", "changes", "digest", "closed"], rows, "closed-periods")}</section>`;
}

function quarantineSection(q: AccountQuarantine): string {
  const reasons: Cell[][] = q.reasons.map((r) => [r.reason, r.records, r.seen]);
  const records: Cell[][] = q.records.map((r) => [
    r.stream,
    r.reason,
    r.seenCount,
    `${iso(r.firstSeenAt)} … ${iso(r.lastSeenAt)}`,
    pre(r.rawText),
  ]);
  const listed = q.total > q.records.length ? `<p>The ${q.records.length} most recent of ${q.total} records:</p>` : "";
  return `<section id="quarantine"><h2>Quarantine (${q.total})</h2>
${table(["reason", "records", "times seen"], reasons)}
${
  q.total === 0
    ? ""
    : `${listed}${table(
        ["stream", "reason", "seen", "first … last seen", "exact text as received"],
        records,
        "quarantined",
      )}`
}</section>`;
}

function coinsSection(account: string, coins: CoinBalance[], base: string): string {
  const rows: Cell[][] = coins.map((c) => [
    link(`${base}/accounts/${encodeURIComponent(account)}/coins/${encodeURIComponent(c.coin)}`, c.coin),
    { num: c.balance },
    iso(c.asOf),
    c.billId,
  ]);
  return `<section id="coins"><h2>Coins</h2>
${table(["coin (charts)", "latest balance", "as of", "bill id"], rows, "coins")}</section>`;
}

export function accountPage(v: AccountView, base: string, now: number): string {
  const body = [
    stateSection(v.fleet),
    streamsSection(v.streams, now),
    coinsSection(v.account, v.coins, base),
    verifySection(v.verify),
    closesSection(v.closes),
    quarantineSection(v.quarantine),
  ].join("\n");
  return page(`Account ${v.account}`, body, { base, trail: [["accounts", `${base}/`]] });
}
