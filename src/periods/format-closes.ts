// The text forms of `ledger-sync close`: what a close did, and the list of closed periods.
import { textTable } from "../statement/text-table.ts";
import type { CloseOutcome } from "./close-period.ts";
import { untiedCoins } from "./close-rollforward.ts";
import type { ClosedPeriodListing } from "./list-closes.ts";

export function formatCloseOutcome(o: CloseOutcome): string {
  const c = o.close;
  const sealed = `${c.billCount} bill(s), sha256 ${c.digest}`;
  if (o.status === "unchanged")
    return (
      `${c.period} of account "${c.account}" is already closed with the same bills ` +
      `(close #${c.id} by ${c.closedBy} at ${c.closedAt.toISOString()}; ${sealed}): nothing to do\n`
    );
  const again = o.superseded
    ? `; its bills changed since close #${o.superseded.id} ` +
      `(${o.superseded.billCount} bill(s), sha256 ${o.superseded.digest}), which this one supersedes`
    : "";
  const broken = o.statement.coins.filter((x) => !x.chain.ok).map((x) => x.coin);
  const untied = c.untiedReason
    ? `accepted untied (roll-forward ${c.rollForward}: ${untiedCoins(o.statement).join("; ")}), ` +
      `reason: ${c.untiedReason}\n`
    : `roll-forward: ${c.rollForward}\n`;
  return (
    `closed ${c.period} of account "${c.account}": close #${c.id} by ${c.closedBy} ` +
    `(database role ${c.dbUser}) at ${c.closedAt.toISOString()}, ${sealed}${again}\n` +
    untied +
    (broken.length
      ? `note: the balance chain does not hold for ${broken.join(", ")} (see \`ledger-sync statement\`)\n`
      : "")
  );
}

export function formatListing(rows: ClosedPeriodListing[]): string {
  if (rows.length === 0) return "no closed periods\n";
  const changes = (r: ClosedPeriodListing) =>
    r.state === "intact"
      ? ""
      : `${r.changes.changed} changed, ${r.changes.added} added, ${r.changes.missing} missing ` +
        "(ledger-sync verify names them)";
  return `${textTable(
    [
      { header: "account" },
      { header: "period" },
      { header: "state" },
      { header: "bills", right: true },
      { header: "closed at" },
      { header: "by" },
      { header: "close", right: true },
      { header: "sha256" },
      { header: "changes" },
      { header: "roll-forward" },
      { header: "accepted untied" },
    ],
    rows.map((r) => [
      r.account,
      r.period,
      r.state,
      r.state === "intact" ? String(r.bills) : `${r.bills} -> ${r.billsNow}`,
      r.closedAt,
      r.closedBy,
      `#${r.closeId}${r.closes > 1 ? ` (${r.closes} closes)` : ""}`,
      r.digest,
      changes(r),
      r.rollForward ?? "-",
      r.untiedReason ?? "",
    ]),
  ).join("\n")}\n`;
}
