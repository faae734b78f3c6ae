// `accounts list` output: JSON lines for scripts, an aligned table for people.
import type { AccountOverview } from "../../store/accounts/overview.ts";

function json(a: AccountOverview): string {
  return JSON.stringify({
    name: a.name,
    uid: a.uid,
    status: a.status,
    coins: a.coins,
    source: a.source,
    lastSuccess: a.lastSuccess?.toISOString() ?? null,
    lagSeconds: a.lagSeconds,
    verify: a.verify,
    failing: a.failing,
  });
}

export function formatOverview(
  page: { total: number; accounts: AccountOverview[] },
  asJson: boolean,
  offset: number,
): string {
  if (asJson) return page.accounts.map((a) => `${json(a)}\n`).join("");
  const header = ["NAME", "UID", "STATUS", "COINS", "SOURCE", "LAST SUCCESS", "LAG", "VERIFY"];
  const rows = page.accounts.map((a) => [
    `${a.failing ? "! " : ""}${a.name}`,
    a.uid,
    a.status,
    a.coins.join(",") || "-",
    a.source ?? "default",
    a.lastSuccess?.toISOString() ?? "never",
    a.lagSeconds === null ? "-" : `${a.lagSeconds}s`,
    a.verify ?? "-",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `${cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd()}\n`;
  const shown = page.accounts.length === 0 ? "none" : `${offset + 1}-${offset + page.accounts.length}`;
  return [line(header), ...rows.map(line), `accounts ${shown} of ${page.total} (failing first, then by lag)\n`].join(
    "",
  );
}
