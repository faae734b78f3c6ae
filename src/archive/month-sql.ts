// The SQL both archive commands read a month with: a table of bill_rows' shape (the month's partition,
// or the table an attach loads) decoded to the columns of the bills view that a period's canonical
// line reads, the month's digest per account from it, the current closes over the month, and the
// columns of bill_rows as the catalog has them.
import pg from "pg";
import { canonicalLine, DIGEST_OF_LINES, periodLines } from "../periods/digest.ts";
import { closeFormSql } from "../periods/seal-chain.ts";
import type { ArchiveMonth } from "./month.ts";

export const quoted = (name: string): string => pg.escapeIdentifier(name);

/**
 * The rows of `table` with the bills view's account_name, texts, created_at_ms and payload (as the
 * view gives them: migration bills_view's ledger_bills).
 */
export function decodedRows(table: string): string {
  return `SELECT k.name AS account_name, r.account_id, r.bill_id::text AS bill_id, c.term AS coin, s.term AS symbol,
         ty.term AS business_type, r.amount, r.balance, r.fill_fee, r.created_at,
         (extract(epoch FROM r.created_at) * 1000)::bigint AS created_at_ms, r.transfer_reason,
         ledger_sync_payload(f.fmt, r.bill_id, c.json, s.json, ty.json, r.amount, r.balance, r.fill_fee,
                             r.created_at, r.transfer_reason, r.extra) AS payload
  FROM ${quoted(table)} r
  JOIN account_keys k ON k.id = r.account_id
  JOIN bill_terms c ON c.id = r.coin
  LEFT JOIN bill_terms s ON s.id = r.symbol
  JOIN bill_terms ty ON ty.id = r.business_type
  LEFT JOIN bill_forms f ON f.id = r.form_id`;
}

export interface AccountDigest {
  accountId: number;
  account: string;
  bills: number;
  digest: string;
}

/**
 * Per account of `table`'s rows: its bills and the digest of their canonical lines in `form` (a
 * close's digest; the archive's manifest keeps form 1's).
 */
export async function digestsOf(client: pg.ClientBase, table: string, form: number): Promise<AccountDigest[]> {
  const { rows } = await client.query<{ account_id: number; account: string; bills: number; digest: string }>(
    `SELECT l.account_id, l.account_name AS account, count(*)::int AS bills, ${DIGEST_OF_LINES} AS digest
     FROM (SELECT b.account_id, b.account_name, b.bill_id, b.created_at_ms, ${canonicalLine(form)} AS line
           FROM (${decodedRows(table)}) b) l
     GROUP BY l.account_id, l.account_name
     ORDER BY l.account_id`,
  );
  return rows.map((r) => ({ accountId: r.account_id, account: r.account, bills: r.bills, digest: r.digest }));
}

/** How many rows `table` holds, and how many of them name a key (account, term) the database lacks. */
export async function rowCounts(client: pg.ClientBase, table: string): Promise<{ rows: number; unkeyed: number }> {
  const { rows } = await client.query<{ rows: number; decoded: number }>(
    `SELECT (SELECT count(*)::int FROM ${quoted(table)}) AS rows, (SELECT count(*)::int FROM (${decodedRows(table)}) d)
       AS decoded`,
  );
  return { rows: rows[0]!.rows, unkeyed: rows[0]!.rows - rows[0]!.decoded };
}

/** The digest in `form` of an account's bills in [fromMs, toMs) as the bills view holds them now (a close's check). */
export async function viewDigest(
  client: pg.ClientBase,
  account: string,
  fromMs: number,
  toMs: number,
  form: number,
): Promise<{ digest: string; bills: number }> {
  const { rows } = await client.query<{ digest: string; bills: number }>(
    `SELECT ${DIGEST_OF_LINES} AS digest, count(*)::int AS bills FROM (${periodLines(form)}) l`,
    [account, String(fromMs), String(toMs)],
  );
  return rows[0]!;
}

/**
 * The same, as the view will hold them once `table` (a month's rows, not attached yet) is attached:
 * the view's bills of the range and `table`'s.
 */
export async function digestWith(
  client: pg.ClientBase,
  table: string,
  account: string,
  fromMs: number,
  toMs: number,
  form: number,
): Promise<{ digest: string; bills: number }> {
  const columns =
    "account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at, created_at_ms, " +
    "transfer_reason, payload";
  const { rows } = await client.query<{ digest: string; bills: number }>(
    `SELECT ${DIGEST_OF_LINES} AS digest, count(*)::int AS bills
     FROM (SELECT b.bill_id, b.created_at_ms, ${canonicalLine(form)} AS line
           FROM (SELECT ${columns} FROM bills UNION ALL SELECT ${columns} FROM (${decodedRows(table)}) d) b
           WHERE b.account_name = $1 AND b.created_at_ms >= $2::bigint AND b.created_at_ms < $3::bigint
             AND b.created_at >= timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
             AND b.created_at < timestamptz 'epoch' + $3::bigint * interval '1 millisecond') l`,
    [account, String(fromMs), String(toMs)],
  );
  return rows[0]!;
}

export interface CloseRow {
  id: string;
  account: string;
  period: string;
  fromMs: number;
  toMs: number;
  billCount: number;
  digest: string;
  /** The canonical line form of its digest (close_seals.form; 1 before the chain). */
  form: number;
}

/**
 * The current closes (those no later close supersedes) of these accounts whose period overlaps the
 * month, in account and period order.
 */
export async function currentClosesOver(
  client: pg.ClientBase,
  accounts: string[],
  month: ArchiveMonth,
): Promise<CloseRow[]> {
  const { rows } = await client.query<{
    id: string;
    account: string;
    period: string;
    from_ms: string;
    to_ms: string;
    bill_count: number;
    digest: string;
    form: number;
  }>(
    `SELECT p.id::text AS id, p.account_name AS account, p.period, p.period_start_ms::text AS from_ms,
            p.period_end_ms::text AS to_ms, p.bill_count, p.digest,
            ${closeFormSql("p")} AS form
     FROM period_closes p
     WHERE p.account_name = ANY($1::text[]) AND p.period_end_ms > $2::bigint AND p.period_start_ms < $3::bigint
       AND NOT EXISTS (SELECT 1 FROM period_closes n WHERE n.account_name = p.account_name AND n.supersedes = p.id)
     ORDER BY p.account_name, p.period_start_ms, p.id`,
    [accounts, String(month.fromMs), String(month.toMs)],
  );
  return rows.map((r) => ({
    id: r.id,
    account: r.account,
    period: r.period,
    fromMs: Number(r.from_ms),
    toMs: Number(r.to_ms),
    billCount: r.bill_count,
    digest: r.digest,
    form: r.form,
  }));
}

export const covers = (c: { fromMs: number; toMs: number }, month: ArchiveMonth): boolean =>
  c.fromMs <= month.fromMs && c.toMs >= month.toMs;

/** bill_rows' columns and their types, in the table's order. */
export async function billRowsColumns(client: pg.ClientBase): Promise<{ name: string; type: string }[]> {
  const { rows } = await client.query<{ name: string; type: string }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
     FROM pg_attribute a
     WHERE a.attrelid = 'bill_rows'::regclass AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY a.attnum`,
  );
  return rows;
}

export interface PartitionState {
  /** The table exists (attached or not). */
  exists: boolean;
  /** It is a partition of bill_rows. */
  attached: boolean;
}

export async function partitionState(client: pg.ClientBase, month: ArchiveMonth): Promise<PartitionState> {
  const { rows } = await client.query<{ exists: boolean; attached: boolean }>(
    `SELECT to_regclass($1) IS NOT NULL AS exists,
            EXISTS (SELECT 1 FROM pg_inherits i
                    WHERE i.inhrelid = to_regclass($1) AND i.inhparent = 'bill_rows'::regclass)
              AS attached`,
    [quoted(month.partition)],
  );
  return rows[0]!;
}

/** The role may detach, drop and attach partitions of bill_rows: it is (a member of) the table's owner. */
export async function ownsBillRows(client: pg.ClientBase): Promise<{ role: string; owner: string; owns: boolean }> {
  const { rows } = await client.query<{ role: string; owner: string; owns: boolean }>(
    `SELECT current_user::text AS role, pg_get_userbyid(c.relowner)::text AS owner,
            pg_has_role(current_user, c.relowner, 'MEMBER') AS owns
     FROM pg_class c WHERE c.oid = 'bill_rows'::regclass`,
  );
  return rows[0]!;
}

/** Settings every archive transaction runs with, so that CSV text is the same whoever runs it. */
export const SESSION_SETTINGS =
  "SET LOCAL TimeZone = 'UTC'; SET LOCAL DateStyle = 'ISO, YMD'; SET LOCAL IntervalStyle = 'postgres'; " +
  "SET LOCAL bytea_output = 'hex'; SET LOCAL extra_float_digits = 1";

/** The key two archive commands on one month share: the second is refused while the first runs. */
export function archiveLockSql(month: ArchiveMonth): string {
  return `hashtext('ledger_sync_archive'), (date '${month.firstDay}' - date '2000-01-01')`;
}

/** ledger_sync_bill_month's lock of the month: a write that would make the month's partition waits for it. */
export function monthLockSql(month: ArchiveMonth): string {
  return `hashtext('ledger_sync_bill_month'), (date '${month.firstDay}' - date '2000-01-01')`;
}
