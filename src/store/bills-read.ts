// Reads one account's bills for an export: in ledger order (created_at, then bill_id as a number, as
// verify's balance chain orders them), a page at a time by keyset, inside one read-only snapshot so
// that the whole export sees the same books however long it takes. Every value comes back as the
// text PostgreSQL prints: NUMERIC digit for digit, ids and milliseconds as digits, never a JS number.
import type pg from "pg";

export interface BillsRange {
  account: string;
  /** First instant included (epoch ms). */
  fromMs: number;
  /** First instant excluded (epoch ms). */
  toMs: number;
  /** Only bills in this coin. */
  coin?: string;
}

/** What a movement of money needs: enough for a tax tool's row, and the keyset of ledger order. */
export interface BillMovement {
  billId: string;
  coin: string;
  /** null: a bill of no contract (a deposit, withdrawal or transfer). */
  symbol: string | null;
  businessType: string;
  amount: string;
  fillFee: string;
  /** UTC, ISO 8601 with milliseconds: 2026-01-31T14:25:13.123Z. */
  createdAt: string;
  createdAtMs: string;
}

/** A stored bill as text, every column of `bills`. */
export interface ExportBill extends BillMovement {
  accountName: string;
  balance: string;
  /** The jsonb as PostgreSQL prints it. */
  raw: string;
  firstSeenAt: string;
  lastSeenAt: string;
  source: string;
  transferReason: string | null;
}

/** The columns a page selects, and the row type they make. */
export interface Selection<Row extends BillMovement> {
  columns: string;
  /** Never set: carries the row type. */
  row?: Row;
}

/** Wide enough for any export; inside timestamptz's range, where `epoch + ms` is computed. */
export const EARLIEST_MS = 0;
export const LATEST_MS = 8_640_000_000_000_000;

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const MOVEMENT = `bill_id AS "billId", coin, symbol,
  business_type AS "businessType", amount::text AS amount,
  fill_fee::text AS "fillFee", ${iso("created_at")} AS "createdAt", created_at_ms::text AS "createdAtMs"`;

/** A tax tool's columns: the largest ones (raw above all) are not read at all. */
export const MOVEMENT_COLUMNS: Selection<BillMovement> = { columns: MOVEMENT };
export const EVERY_COLUMN: Selection<ExportBill> = {
  columns: `${MOVEMENT}, account_name AS "accountName", balance::text AS balance, raw::text AS raw,
    ${iso("first_seen_at")} AS "firstSeenAt", ${iso("last_seen_at")} AS "lastSeenAt",
    source, transfer_reason AS "transferReason"`,
};

const instant = (param: string) => `timestamptz 'epoch' + ${param}::bigint * interval '1 millisecond'`;

// The keyset page: $1 account, $2 time of the last bill served (or the range's start), $3 its id
// ('-1' before the first page), $4 end of the range (excluded), $5 page size, $6 the coin. Each form
// orders by the columns of an index, so a page reads only its own rows: (account_name, created_at)
// for the whole account, (account_name, coin, created_at_ms) for one coin. Both times are the same
// instant, so both forms give the same order.
const pageAllCoins = (columns: string) => `SELECT ${columns} FROM bills
  WHERE account_name = $1 AND created_at >= ${instant("$2")} AND created_at < ${instant("$4")}
    AND (created_at > ${instant("$2")} OR bill_id::numeric > $3::numeric)
  ORDER BY created_at, bill_id::numeric LIMIT $5`;
const pageOneCoin = (columns: string) => `SELECT ${columns} FROM bills
  WHERE account_name = $1 AND coin = $6 AND created_at_ms >= $2::bigint AND created_at_ms < $4::bigint
    AND (created_at_ms > $2::bigint OR bill_id::numeric > $3::numeric)
  ORDER BY created_at_ms, bill_id::numeric LIMIT $5`;

/** The range's bills in ledger order, `pageSize` at a time. Run it inside `inLedgerSnapshot`. */
export async function* ledgerPages<Row extends BillMovement>(
  client: pg.ClientBase,
  range: BillsRange,
  pageSize: number,
  selection: Selection<Row>,
): AsyncGenerator<Row[]> {
  const text = range.coin === undefined ? pageAllCoins(selection.columns) : pageOneCoin(selection.columns);
  let lastMs = String(range.fromMs);
  let lastId = "-1";
  for (;;) {
    const values = [range.account, lastMs, lastId, String(range.toMs), pageSize];
    const { rows } = await client.query<Row>(text, range.coin === undefined ? values : [...values, range.coin]);
    if (rows.length > 0) yield rows;
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1]!;
    [lastMs, lastId] = [last.createdAtMs, last.billId];
  }
}

/** How many bills the range holds (for a progress bar). */
export async function countBills(client: pg.ClientBase, range: BillsRange): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM bills WHERE account_name = $1 AND created_at_ms >= $2::bigint
       AND created_at_ms < $3::bigint AND ($4::text IS NULL OR coin = $4)`,
    [range.account, String(range.fromMs), String(range.toMs), range.coin ?? null],
  );
  return Number(rows[0]!.n);
}

/**
 * Runs `fn` in a REPEATABLE READ, READ ONLY transaction: every page read sees one snapshot, so bills
 * committed while an export runs are not half in it, and the same books export to the same bytes.
 */
export async function inLedgerSnapshot<T>(client: pg.ClientBase, fn: () => Promise<T>): Promise<T> {
  await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    const result = await fn();
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}

/** Accounts with at least one bill, by name. */
export async function hasBills(client: pg.ClientBase, account: string, coin?: string): Promise<boolean> {
  const { rows } = await client.query<{ e: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM bills WHERE account_name = $1 AND ($2::text IS NULL OR coin = $2)) AS e",
    [account, coin ?? null],
  );
  return rows[0]!.e;
}

/** The coins an account has bills in. */
export async function coinsOf(client: pg.ClientBase, account: string): Promise<string[]> {
  const { rows } = await client.query<{ c: string }>(
    "SELECT DISTINCT coin AS c FROM bills WHERE account_name = $1 ORDER BY 1",
    [account],
  );
  return rows.map((r) => r.c);
}
