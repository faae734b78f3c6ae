// The months detached to an archive (archived_months, archived_month_edges; migration
// 20261128000100_archived_months): what the database still knows of a month whose bills are now only
// in files. Every reader asks here before it reads a range, so that a month's absence is never taken
// for "no bills": a statement, an export or a close over an account's archived month is refused by
// name, and verify checks the stored months only, carrying each coin's balance out of the archive.
//
// Archived months are always the oldest ones (detach takes only a month with no stored bills before
// it, attach gives back only the newest archived month): the stored books are every bill from the end
// of the newest archived month on.
import pg from "pg";
import { epochMs } from "./ledger-rows.ts";
import type { Db } from "./prisma.ts";

/** Where the reads run: the Prisma client, or a pg client (an export's snapshot). */
type Reader = Db | pg.ClientBase;

async function select<T>(r: Reader, text: string, values: unknown[]): Promise<T[]> {
  return "$queryRawUnsafe" in r ? r.$queryRawUnsafe<T[]>(text, ...values) : ((await r.query(text, values)).rows as T[]);
}

export interface ArchivedClose {
  id: string;
  period: string;
  digest: string;
  billCount: number;
}

export interface ArchivedMonth {
  /** "2025-01". */
  label: string;
  fromMs: number;
  toMs: number;
  manifestSha256: string;
  archivedAt: Date;
}

/** An archived month as one account had it: its bills there, their digest and the closes that sealed them. */
export interface ArchivedAccountMonth extends ArchivedMonth {
  bills: number;
  digest: string;
  closes: ArchivedClose[];
}

/** A read of a range that holds archived bills: refused, naming the months and how to bring them back. */
export class ArchivedMonthsError extends Error {
  override name = "ArchivedMonthsError";
  constructor(
    readonly account: string,
    readonly months: ArchivedAccountMonth[],
    what: string,
  ) {
    super(
      `${what}: account "${account}" has ${months.map((m) => `${m.bills} bill(s) in ${m.label}`).join(", ")}, ` +
        `which ${months.length === 1 ? "is" : "are"} archived (detached to files; manifest sha256 ` +
        `${months.map((m) => `${m.manifestSha256.slice(0, 16)}...`).join(", ")}): the database does not hold ` +
        `${months.length === 1 ? "it" : "them"}; ` +
        `the stored books begin at ${new Date(months.at(-1)!.toMs).toISOString()} ` +
        "(a range from there on reads them), and `ledger-sync archive attach DIR/YYYY-MM` brings a month back " +
        "(the newest archived first)",
    );
  }
}

/** An archived month's row as archivedMonthsSql gives it (archived_at as JSON text when read through json_agg). */
export interface ArchivedMonthRow {
  month: string;
  from_ms: string;
  to_ms: string;
  manifest_sha256: string;
  archived_at: Date | string;
  entry: { bills: number; digest: string; closes: ArchivedClose[] };
}

/**
 * SQL of the account's archived months (those it had bills in), overlapping [from, to) when those
 * are not NULL; the arguments are SQL expressions (parameters) of the account's name and the range
 * in epoch ms. Oldest first when ordered by month; other statements embed it (verify/account-facts.ts).
 */
export function archivedMonthsSql(account: string, fromMs: string, toMs: string): string {
  return `SELECT to_char(a.month, 'YYYY-MM') AS month,
            ${epochMs("a.month::timestamp AT TIME ZONE 'UTC'")}::text AS from_ms,
            ${epochMs("(a.month + interval '1 month')::timestamp AT TIME ZONE 'UTC'")}::text AS to_ms,
            a.manifest_sha256, a.archived_at, e.entry
     FROM archived_months a
     CROSS JOIN LATERAL jsonb_array_elements(a.accounts) AS e(entry)
     WHERE e.entry->>'name' = ${account}
       AND (${fromMs}::bigint IS NULL OR (a.month + interval '1 month')::timestamp AT TIME ZONE 'UTC'
                                  > timestamptz 'epoch' + ${fromMs}::bigint * interval '1 millisecond')
       AND (${toMs}::bigint IS NULL OR a.month::timestamp AT TIME ZONE 'UTC'
                                  < timestamptz 'epoch' + ${toMs}::bigint * interval '1 millisecond')`;
}

export function toArchivedMonth(r: ArchivedMonthRow): ArchivedAccountMonth {
  return {
    label: r.month,
    fromMs: Number(r.from_ms),
    toMs: Number(r.to_ms),
    manifestSha256: r.manifest_sha256,
    archivedAt: new Date(r.archived_at),
    bills: Number(r.entry.bills),
    digest: String(r.entry.digest),
    closes: r.entry.closes.map((c) => ({
      id: String(c.id),
      period: String(c.period),
      digest: String(c.digest),
      billCount: Number(c.billCount),
    })),
  };
}

/**
 * The account's archived months (those it had bills in), oldest first; only those overlapping
 * [fromMs, toMs) when given.
 */
export async function archivedMonthsOf(
  db: Reader,
  account: string,
  range?: { fromMs: number; toMs: number },
): Promise<ArchivedAccountMonth[]> {
  const rows = await select<ArchivedMonthRow>(db, `${archivedMonthsSql("$1", "$2", "$3")} ORDER BY a.month`, [
    account,
    range === undefined ? null : String(range.fromMs),
    range === undefined ? null : String(range.toMs),
  ]);
  return rows.map(toArchivedMonth);
}

/** The coins whose balance the account carries out of an archived month (their edges' coins). */
export async function archivedCoinsOf(db: Reader, account: string): Promise<string[]> {
  const rows = await select<{ coin: string }>(
    db,
    `SELECT DISTINCT t.term AS coin FROM archived_month_edges e JOIN bill_terms t ON t.id = e.coin
     WHERE e.account_id = (SELECT id FROM account_keys WHERE name = $1)`,
    [account],
  );
  return rows.map((r) => r.coin);
}

/** Refuses `what` (a statement, an export, a close) over [fromMs, toMs) when the account has bills archived in it. */
export async function refuseArchived(
  db: Reader,
  account: string,
  fromMs: number,
  toMs: number,
  what: string,
): Promise<void> {
  const months = await archivedMonthsOf(db, account, { fromMs, toMs });
  if (months.length > 0) throw new ArchivedMonthsError(account, months, what);
}

export interface ArchivedMonthEntry {
  /** The month's first day, "2025-01-01". */
  firstDay: string;
  label: string;
  partition: string;
  rows: number;
  manifestSha256: string;
  /** The manifest's accounts. */
  accounts: unknown[];
}

/**
 * Records a month as archived, with each account's last bill of each coin in it, read from its
 * partition: run in the transaction that drops the partition, before the drop. Refused when a month
 * before it still holds bills (archives stay the oldest months).
 */
export async function registerArchivedMonth(client: pg.ClientBase, m: ArchivedMonthEntry): Promise<void> {
  const { rows: older } = await client.query<{ month: string }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month FROM bill_rows
     WHERE created_at < $1::date::timestamp AT TIME ZONE 'UTC' LIMIT 1`,
    [m.firstDay],
  );
  if (older.length > 0)
    throw new ArchivedMonthOrder(
      `${m.label} cannot be archived while ${older[0]!.month}, an earlier month, still holds bills: ` +
        "archive the oldest months first (archived months are always the oldest, so the stored books stay whole from " +
        "the newest archived month on)",
    );
  await client.query(
    `INSERT INTO archived_months (month, partition_name, rows, manifest_sha256, accounts)
     VALUES ($1::date, $2, $3::bigint, $4, $5::jsonb)`,
    [m.firstDay, m.partition, String(m.rows), m.manifestSha256, JSON.stringify(m.accounts)],
  );
  await client.query(
    `INSERT INTO archived_month_edges (account_id, coin, month, bill_id, created_at, balance)
     SELECT DISTINCT ON (account_id, coin) account_id, coin, $1::date, bill_id, created_at, balance
     FROM ${pg.escapeIdentifier(m.partition)} ORDER BY account_id, coin, created_at DESC, bill_id DESC`,
    [m.firstDay],
  );
}

/** An archive command taken out of the oldest-first order. */
export class ArchivedMonthOrder extends Error {
  override name = "ArchivedMonthOrder";
}

/**
 * Forgets a month's archive record once the month is attached again (in the attach's transaction):
 * refused when a newer month is archived too (it is attached first), or when the database recorded
 * another archive of the month than the one being attached. A month the database has no record of
 * (an archive loaded into another database, a restore drill) is attached as it is.
 */
export async function unregisterArchivedMonth(
  client: pg.ClientBase,
  m: { firstDay: string; label: string; manifestSha256: string },
): Promise<"forgotten" | "unknown"> {
  const { rows: newer } = await client.query<{ month: string }>(
    `SELECT to_char(month, 'YYYY-MM') AS month FROM archived_months WHERE month > $1::date ORDER BY month DESC LIMIT 1`,
    [m.firstDay],
  );
  if (newer.length > 0)
    throw new ArchivedMonthOrder(
      `${newer[0]!.month} is archived too and is newer than ${m.label}: attach ${newer[0]!.month} first ` +
        "(archived months are always the oldest)",
    );
  const { rows } = await client.query<{ manifest_sha256: string }>(
    "DELETE FROM archived_months WHERE month = $1::date RETURNING manifest_sha256",
    [m.firstDay],
  );
  if (rows.length === 0) return "unknown";
  if (rows[0]!.manifest_sha256 !== m.manifestSha256)
    throw new ArchivedMonthOrder(
      `${m.label} was archived here with manifest sha256 ${rows[0]!.manifest_sha256}, and this archive's manifest is ` +
        `${m.manifestSha256}: not the archive detached from this database`,
    );
  return "forgotten";
}
