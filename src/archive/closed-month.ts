// What `archive detach` reads of a month and calls closed (detach.ts explains the rule): the
// partition, its accounts' digests from the rows, and the current closes over the month, every one
// of which must still hold.
import pg from "pg";
import { CURRENT_FORM } from "../periods/digest.ts";
import { type ManifestAccount } from "./manifest.ts";
import { ArchiveRefused, type ArchiveMonth } from "./month.ts";
import {
  billRowsColumns,
  covers,
  currentClosesOver,
  digestsOf,
  partitionState,
  rowCounts,
  viewDigest,
  type CloseRow,
} from "./month-sql.ts";

export interface MonthState {
  rows: number;
  accounts: ManifestAccount[];
  closes: CloseRow[];
  columns: { name: string; type: string }[];
  server: string;
}

/** The month's partition, its accounts, digests and closes, refused unless the month is closed (see the top). */
export async function readClosedMonth(client: pg.ClientBase, month: ArchiveMonth): Promise<MonthState> {
  const part = await partitionState(client, month);
  if (!part.exists)
    throw new ArchiveRefused(
      `${month.label}: no partition ${month.partition} (archived already, or no bill was ever stored in that month)`,
    );
  if (!part.attached)
    throw new ArchiveRefused(`${month.partition} exists but is not a partition of bill_rows: not archived from here`);
  const counts = await rowCounts(client, month.partition);
  if (counts.rows === 0) throw new ArchiveRefused(`${month.partition} holds no bills: nothing to archive`);
  if (counts.unkeyed > 0)
    throw new ArchiveRefused(
      `${month.partition}: ${counts.unkeyed} row(s) name an account or term that account_keys or bill_terms lacks`,
    );
  // The manifest keeps each account's digest in the current form (its digestForm says which).
  const digests = await digestsOf(client, month.partition, CURRENT_FORM);
  const closes = await currentClosesOver(
    client,
    digests.map((d) => d.account),
    month,
  );
  const accounts: ManifestAccount[] = [];
  for (const d of digests) {
    const own = closes.filter((c) => c.account === d.account);
    if (!own.some((c) => covers(c, month)))
      throw new ArchiveRefused(
        `${month.label} is not closed for account "${d.account}" (${d.bills} bill(s) in it): ` +
          (own.length === 0
            ? "no close covers it"
            : `its close(s) ${own.map((c) => `#${c.id} (${c.period})`).join(", ")} cover only part of it`) +
          `; \`ledger-sync close --period ${month.label} --account ${d.account}\` first`,
      );
    for (const c of own) await assertCloseHolds(client, month, d, c);
    accounts.push({
      id: d.accountId,
      name: d.account,
      bills: d.bills,
      digest: d.digest,
      closes: own.map((c) => ({
        id: c.id,
        period: c.period,
        fromMs: c.fromMs,
        toMs: c.toMs,
        billCount: c.billCount,
        digest: c.digest,
      })),
    });
  }
  const { rows: server } = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  return { rows: counts.rows, accounts, closes, columns: await billRowsColumns(client), server: server[0]!.v };
}

async function assertCloseHolds(
  client: pg.ClientBase,
  month: ArchiveMonth,
  d: { account: string; bills: number; digest: string },
  c: CloseRow,
): Promise<void> {
  const now = await viewDigest(client, d.account, c.fromMs, c.toMs, c.form);
  if (now.digest !== c.digest)
    throw new ArchiveRefused(
      `close #${c.id} of account "${d.account}" (${c.period}) does not match the bills stored now ` +
        `(sealed ${c.billCount} bill(s), sha256 ${c.digest.slice(0, 16)}...; now ${now.bills}, ` +
        `${now.digest.slice(0, 16)}...): \`ledger-sync verify --account ${d.account}\` names the bills; ` +
        `close ${c.period} again before archiving ${month.label}`,
    );
  if (c.fromMs !== month.fromMs || c.toMs !== month.toMs) return;
  // The partition's own rows, in the close's form, must give what it sealed.
  const rows =
    c.form === CURRENT_FORM
      ? d
      : (await digestsOf(client, month.partition, c.form)).find((x) => x.account === d.account);
  if (rows?.digest !== c.digest)
    throw new ArchiveRefused(
      `the rows of ${month.partition} give account "${d.account}" sha256 ${rows?.digest.slice(0, 16) ?? "-"}... ` +
        `but close #${c.id} sealed ${c.digest.slice(0, 16)}...: not archived`,
    );
}
