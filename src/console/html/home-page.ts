// The console's first page: one row per account with its bills bookmark, lag, last verify and
// quarantine, each linking to the account's page.
import type { Overview } from "../read/streams.ts";
import { badge, link, page, table, type Cell } from "./layout.ts";
import { lagText, verifyBadge } from "./words.ts";

export function homePage(o: Overview, base: string, now: number): string {
  const rows: Cell[][] = o.accounts.map((account) => {
    const bills = o.store.streams.find((s) => s.account === account && s.stream === "bills");
    const verify = o.verify.find((v) => v.account === account);
    const quarantined = o.store.quarantined[account] ?? 0;
    return [
      link(`${base}/accounts/${encodeURIComponent(account)}`, account),
      bills ? new Date(bills.cursorMs).toISOString() : "no bills cursor",
      bills ? lagText(now - bills.cursorMs) : "",
      verifyBadge(verify?.outcome ?? null, verify?.failures ?? 0),
      badge(String(quarantined), quarantined === 0),
    ];
  });
  const body =
    o.accounts.length === 0
      ? `<p>No account has been synced into this database yet (no cursor, no verify, no quarantine).</p>`
      : table(["account", "bills cursor", "lag", "last verify", "quarantined"], rows, "accounts");
  return page("Accounts", body, { base });
}
