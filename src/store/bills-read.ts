// Reads one account's bills for an export: in ledger order (created_at, then bill_id as a number, as
// verify's balance chain orders them), inside one read-only snapshot so that the whole export sees the
// same books however long it takes. Either a page at a time by keyset, every value as the text
// PostgreSQL prints (NUMERIC digit for digit, ids and milliseconds as digits, never a JS number), or
// as one COPY ... TO STDOUT of lines PostgreSQL renders itself (ledgerCopy).
import pg from "pg";
import { accountKey, instantOf, termKey } from "./ledger-rows.ts";

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

/** The columns a page selects, and the row type they make. */
export interface Selection<Row extends BillMovement> {
  columns: string;
  /** Never set: carries the row type. */
  row?: Row;
}

/** Wide enough for any export; inside timestamptz's range, where `epoch + ms` is computed. */
export const EARLIEST_MS = 0;
export const LATEST_MS = 8_640_000_000_000_000;

/** A timestamptz column as UTC ISO 8601 text with milliseconds: 2026-01-31T14:25:13.123Z. */
export const isoUtc = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const MOVEMENT = `bill_id AS "billId", coin, symbol,
  business_type AS "businessType", amount::text AS amount,
  fill_fee::text AS "fillFee", ${isoUtc("created_at")} AS "createdAt", created_at_ms::text AS "createdAtMs"`;

/** A tax tool's columns: the largest ones (raw above all) are not read at all. */
export const MOVEMENT_COLUMNS: Selection<BillMovement> = { columns: MOVEMENT };

const instant = instantOf;

/** SQL for a range's values: parameters in a page's query, literals in a COPY (which takes none). */
interface RangeSql {
  account: string;
  fromMs: string;
  toMs: string;
  coin: string | undefined;
}

// The range in ledger order, read from ledger_bills (the bills view with bill_rows' own keys): each
// form orders by the columns of an index of bill_rows, so a read touches only the range's rows in
// the months it spans: (account_id, created_at, bill_id) for the whole account, (account_id, coin,
// created_at) for one coin. `afterId`: only the bills after (fromMs, afterId) in ledger order, a
// page's keyset.
function inLedgerOrder(columns: string, v: RangeSql, afterId?: string): string {
  const keyset =
    afterId === undefined ? "" : `\n    AND (created_at > ${instant(v.fromMs)} OR bill_key > ${afterId}::numeric)`;
  return `SELECT ${columns} FROM ledger_bills
  WHERE account_id = ${accountKey(v.account)}${v.coin !== undefined ? ` AND coin_key = ${termKey(v.coin)}` : ""}
    AND created_at >= ${instant(v.fromMs)} AND created_at < ${instant(v.toMs)}${keyset}
  ORDER BY created_at, bill_key`;
}

// The keyset page: $1 account, $2 time of the last bill served (or the range's start), $3 its id
// ('-1' before the first page), $4 end of the range (excluded), $5 page size, $6 the coin.
const PAGE_VALUES = { account: "$1", fromMs: "$2", toMs: "$4" };
const pageSql = (columns: string, coin: boolean) =>
  `${inLedgerOrder(columns, { ...PAGE_VALUES, coin: coin ? "$6" : undefined }, "$3")} LIMIT $5`;

/** The range's bills in ledger order, `pageSize` at a time. Run it inside `inLedgerSnapshot`. */
export async function* ledgerPages<Row extends BillMovement>(
  client: pg.ClientBase,
  range: BillsRange,
  pageSize: number,
  selection: Selection<Row>,
): AsyncGenerator<Row[]> {
  const text = pageSql(selection.columns, range.coin !== undefined);
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

/**
 * One query text that writes the range's bills in ledger order with `COPY ... TO STDOUT WITH (options)`,
 * a row of the expressions `columns` over `bills` for each bill. Run it inside `inLedgerSnapshot`.
 */
export function ledgerCopy(range: BillsRange, columns: string, options: string): string {
  const values: RangeSql = {
    account: pg.escapeLiteral(range.account),
    fromMs: msLiteral(range.fromMs),
    toMs: msLiteral(range.toMs),
    coin: range.coin === undefined ? undefined : pg.escapeLiteral(range.coin),
  };
  // Planned for all its rows, the COPY would sort the whole range before its first line (on disk past
  // work_mem). Without a full sort, the planner takes the index that serves ledger order up to the time
  // and sorts only the bills of each instant among themselves (an incremental sort): lines stream. The
  // setting lasts until the transaction's end (an export's COPY is its last query).
  // (A sort left in the plan, disabled, carries a fixed cost penalty past the JIT's threshold: the
  // JIT would compile the COPY for nothing, so it is off too.)
  return `SET LOCAL enable_sort = off;
SET LOCAL jit = off;
COPY (${inLedgerOrder(columns, values)}) TO STDOUT WITH (${options})`;
}

function msLiteral(ms: number): string {
  if (!Number.isSafeInteger(ms)) throw new RangeError(`not a whole number of milliseconds: ${ms}`);
  return String(ms);
}

/** How many bills the range holds (for a progress bar). */
export async function countBills(client: pg.ClientBase, range: BillsRange): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM bill_rows WHERE account_id = ${accountKey("$1")}
       AND created_at >= ${instant("$2")} AND created_at < ${instant("$3")}
       AND ($4::text IS NULL OR coin = ${termKey("$4")})`,
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
    `SELECT EXISTS (SELECT 1 FROM bill_rows WHERE account_id = ${accountKey("$1")}
       AND ($2::text IS NULL OR coin = ${termKey("$2")})) AS e`,
    [account, coin ?? null],
  );
  return rows[0]!.e;
}

/** The coins an account has bills in. */
export async function coinsOf(client: pg.ClientBase, account: string): Promise<string[]> {
  const { rows } = await client.query<{ c: string }>(
    `SELECT t.term AS c FROM bill_coins c JOIN bill_terms t ON t.id = c.coin
     WHERE c.account_id = ${accountKey("$1")} ORDER BY 1`,
    [account],
  );
  return rows.map((r) => r.c);
}
