// Stores one completed window of bills: the bills, quarantined items and the advanced cursor, as ONE
// SQL statement. A single statement is atomic on its own, so the cursor can never move past rows that
// were not written, and a page costs one database round trip.
//
// Revisions: the bills table refuses content changes outside "the revision path" (a trigger, see
// the audit_trail migration). This statement declares that path for its own transaction with
// set_config('ledger_sync.revision', 'on', true), and the trigger files each replaced version in
// bill_revisions. The declaration sits in the `input` CTE that feeds the upsert, so it has run
// before the first row reaches the trigger; were it ever not, the statement fails loudly rather
// than writing anything silently.
import type { BillSource } from "../config/accounts.ts";
import type { Bill, RejectedItem } from "../exchange/bill-item.ts";
import { inMadeMonths } from "./bill-months.ts";
import { directPool, type Db } from "./prisma.ts";
import type { RunFence } from "./run-lease.ts";
import { billsDocument } from "./bills-document.ts";
import { quarantineUpsertSql, sha256 } from "./quarantine.ts";

export interface BillsWindowWrite {
  accountName: string;
  /** Stream name for quarantined items ("bills"). */
  stream: string;
  /**
   * The bookmark this write advances: "bills" for incremental sync, or a backfill window's own;
   * null for a repair re-read, which moves no bookmark. Default: `stream`.
   */
  cursorStream?: string | null;
  /** Every bill at or before this instant has now been fetched (epoch ms). */
  cursorMs: number;
  bills: Bill[];
  rejected: RejectedItem[];
  /** Where rejected items were met (window, filters): stored with them. */
  context: Record<string, unknown>;
  /** The endpoint the bills came from, stored with new bills (default "v2"). */
  source?: BillSource;
  /** Where a stream paged by a cursor resumes after this write (null: between ranges). */
  resume?: unknown;
  /**
   * The run's lease of the account's bills (run-lease.ts): the statement fails, writing nothing,
   * unless it is still the lease's. Every run of the worker and the commands passes it.
   */
  fence?: RunFence;
}

export interface BillsWindowResult {
  inserted: number;
  /** Known bill ids whose content changed; the old version went to bill_revisions. */
  revised: number;
  /** Rows written or confirmed (inserted + revised + unchanged). */
  upserted: number;
  /** Quarantine rows added (a bad item seen before only bumps its counter). */
  quarantined: number;
  /** How long after its creation each new bill was first stored (first_seen_at − created_at, ms). */
  insertedLatenessMs: number[];
}

// Content columns: a difference in any of them is a revision. Numerics compare as text so that a
// change of scale ("1.5" -> "1.50") is recorded too: we keep what the exchange sent, digit for digit.
// A transfer reason not sent is not a change (an endpoint may leave it out); one sent that differs
// from what is stored, a first one included, is. Terms compare by their keys (one key per term).
const CONTENT_DIFFERS = `
  (b.coin, b.symbol, b.business_type, b.amount::text, b.balance::text, b.fill_fee::text, b.old_at)
  IS DISTINCT FROM
  (k.coin_key, k.symbol_key, k.type_key, k.amount::text, k.balance::text, k.fill_fee::text, k.at)
  OR (k.transfer_reason IS NOT NULL AND k.transfer_reason IS DISTINCT FROM b.transfer_reason)`;

// The stored columns a lookup compares (ledger_sync_bill_by_id returns the same, for the second probe).
const STORED =
  "b.ctid AS row_id, b.created_at AS old_at, b.coin, b.symbol, b.business_type, b.amount, b.balance, b.fill_fee, " +
  "b.transfer_reason";
const ACCOUNT_KEY = "(SELECT id FROM account)";

// The bills go to bill_rows (docs/design/bill-storage.md) with their keys: the account's, each
// term's and each payload form's, found or added once per statement, not per bill. Keys are taken
// in one order by every writer (terms before forms, each in sorted order: bills-document.ts), so
// two accounts adding the same new terms at once wait for each other instead of deadlocking. A payload is
// stored as its form and extra values only when PostgreSQL renders them back to the exact text
// sent (ledger_sync_payload); otherwise the text is kept whole (form 1): exact either way.
//
// A bill id is unique per account over every month, and the partitions' primary key holds the
// time, so known bills are found before anything is written, and only where one can be: an id
// outside every stored month's id range (bill_id_ranges) is new with no lookup at all (ids grow
// with time: every new bill of a live account is above them). Inside, the bill is probed by its
// primary key (time and id: a re-read bill, the usual case); missing there, in the months whose
// id range holds it (a bill whose time or coin the exchange changed, or ids that do not grow with
// time).
// A bill read again unchanged is not written at all: no row version, no index entry, no trigger;
// one whose content differs is updated where it is (into its new month if its time moved), and
// the guard files the old version in bill_revisions. When it was last read is the run's
// (sync_runs: its window and end). The CTEs share one snapshot (the probe by id is a STABLE
// function, which reads in it too), so the lookups see only bills stored before this statement.
//
// Planning does not grow with the months an account holds: the statement names bill_rows only
// where the planner can prune by a constant (the probe by primary key, bounded by the batch's
// first and last time, $15 and $16; the insert, routed as it runs). The probe by id and the
// revisions' update could be in any month, so they are PL/pgSQL functions
// (ledger_sync_bill_by_id, ledger_sync_revise_bills: migration month_bounded_plans), planned once
// per connection and pruned as they run; the update is called only when a row differs.
//
// New bills are the batch less the stored ones, by `NOT IN` over `known`: a hashed subplan, `known`
// read once (ids are never NULL, so NOT IN means what it says). A `NOT EXISTS` there was planned
// as a nested loop over `known` for every bill of the batch, quadratic in a re-read: 65 ms of a
// 1,000-bill re-read's 79, and 78 s to read 300,000 stored bills again (now 9 s).
//
// The account's key is an InitPlan ("(SELECT id FROM account)"), hidden from the planner, which
// then plans the probes for an average account, where the unique key is the clear choice (a plain
// parameter for a new account the statistics do not know yet gets a scan of the whole account).
// The first probe names the coin too: on a month not analyzed yet (every month begins so) the
// planner may rate the (account, coin, time) index as cheap as the primary key, and with the coin
// either one finds the bill in one step. A bill whose coin or time changed is missed there and
// found by the second probe. The update (in its function) names the stored coin likewise.
// (Comments stay out of the SQL text, but for its first line: pg_stat_activity shows only the
// first 1 kB, and operators and the crash test recognise the statement there by that line.)
const SQL_TEMPLATE = `/* ledger-sync: bills window write */
WITH input AS (
  SELECT t.*, ledger_sync_bill_id(t.bill_id) AS id,
         timestamptz 'epoch' + t.created_at_ms * interval '1 millisecond' AS at
  FROM json_to_recordset($2::json)
    AS t(bill_id text, c int, s int, t int, amount numeric, balance numeric,
         fill_fee numeric, created_at_ms bigint, f int, extra text[], payload text, transfer_reason text)
  WHERE set_config('ledger_sync.revision', 'on', true) = 'on'
),
account AS (SELECT ledger_sync_account_key($1) AS id),
terms AS (
  SELECT o.n, ledger_sync_term_key(o.term) AS id, ledger_sync_json_inner(o.term) AS json
  FROM unnest($14::text[]) WITH ORDINALITY AS o(term, n)
),
forms AS (
  SELECT o.n, o.fmt, ledger_sync_form_key(o.fmt) AS id FROM unnest($13::text[]) WITH ORDINALITY AS o(fmt, n)
  WHERE (SELECT count(*) FROM terms) >= 0
),
rendered AS (
  SELECT i.*, c.id AS coin_key, s.id AS symbol_key, t.id AS type_key, f.id AS form_id,
         ledger_sync_payload(f.fmt, i.id, c.json, s.json, t.json, i.amount, i.balance, i.fill_fee, i.at,
                             i.transfer_reason, i.extra) IS NOT DISTINCT FROM i.payload AS exact
  FROM input i JOIN terms c ON c.n = i.c LEFT JOIN terms s ON s.n = i.s
  JOIN terms t ON t.n = i.t JOIN forms f ON f.n = i.f
),
keyed AS (
  SELECT r.*, CASE WHEN r.exact THEN r.form_id ELSE 1 END AS form_key,
         CASE WHEN r.exact THEN r.extra ELSE ARRAY[r.payload] END AS kept_extra
  FROM rendered r
),
bounds AS (SELECT min(min_id) AS lo, max(max_id) AS hi FROM bill_id_ranges WHERE account_id = ${ACCOUNT_KEY}),
known AS (
  SELECT k.*, b.row_id, b.old_at, b.coin AS old_coin, ${CONTENT_DIFFERS} AS differs
  FROM keyed k
  CROSS JOIN LATERAL (
    (SELECT ${STORED} FROM bill_rows b
     WHERE b.account_id = ${ACCOUNT_KEY} AND b.coin = k.coin_key AND b.created_at = k.at AND b.bill_id = k.id
       AND b.created_at BETWEEN $15::timestamptz AND $16::timestamptz)
    UNION ALL
    (SELECT * FROM ledger_sync_bill_by_id(${ACCOUNT_KEY}, k.id))
    LIMIT 1
  ) b
  WHERE k.id BETWEEN (SELECT lo FROM bounds) AND (SELECT hi FROM bounds)
),
inserted AS (
  INSERT INTO bill_rows AS b (account_id, coin, symbol, business_type, form_id, created_at, first_seen_at,
                              bill_id, amount, balance, fill_fee, source, transfer_reason, extra)
  SELECT ${ACCOUNT_KEY}, k.coin_key, k.symbol_key, k.type_key, k.form_key, k.at, $3,
         k.id, k.amount, k.balance, k.fill_fee, $11, k.transfer_reason, k.kept_extra
  FROM keyed k
  WHERE k.id NOT IN (SELECT n.id FROM known n)
  ON CONFLICT (account_id, created_at, bill_id) DO NOTHING
  RETURNING b.created_at
),
revisions AS (
  SELECT jsonb_agg(jsonb_build_object(
    'row_id', n.row_id, 'old_at', n.old_at, 'old_coin', n.old_coin, 'id', n.id, 'coin_key', n.coin_key,
    'symbol_key', n.symbol_key, 'type_key', n.type_key, 'form_key', n.form_key, 'kept_extra', n.kept_extra,
    'amount', n.amount, 'balance', n.balance, 'fill_fee', n.fill_fee, 'at', n.at,
    'transfer_reason', n.transfer_reason)) AS rows
  FROM known n WHERE n.differs
),
updated AS MATERIALIZED (
  SELECT u.created_at, u.old_at
  FROM revisions r CROSS JOIN LATERAL ledger_sync_revise_bills(${ACCOUNT_KEY}, $3, r.rows) u
  WHERE r.rows IS NOT NULL
),
quarantined AS (
  ${quarantineUpsertSql({
    account: "$1",
    stream: "$4",
    reasons: "$5",
    texts: "$6",
    hashes: "$7",
    context: "$8",
    now: "$3",
  })}
),
cursor AS (
  INSERT INTO sync_state AS s (account_name, stream, cursor_ms, updated_at, resume)
  SELECT $1, $10, $9::bigint, $3, $12::jsonb WHERE $10::text IS NOT NULL
  ON CONFLICT (account_name, stream) DO UPDATE SET
    cursor_ms = GREATEST(s.cursor_ms, excluded.cursor_ms), updated_at = excluded.updated_at, resume = excluded.resume
  RETURNING 1
),
dirty AS (
  UPDATE verify_state v SET check_from_ms = LEAST(v.check_from_ms, d.m), write_seq = v.write_seq + 1
  FROM (SELECT (extract(epoch FROM min(t)) * 1000)::bigint AS m FROM (
          SELECT created_at AS t FROM inserted
          UNION ALL SELECT created_at FROM updated
          UNION ALL SELECT old_at FROM updated) x) d
  WHERE v.account_name = $1 AND d.m IS NOT NULL
  RETURNING 1
)
SELECT
  /*fence*/
  (SELECT count(*) FROM inserted)::int AS inserted,
  (SELECT count(*) FROM updated)::int AS revised,
  ((SELECT count(*) FROM inserted) + (SELECT count(*) FROM known))::int AS upserted,
  (SELECT count(*) FROM quarantined WHERE inserted)::int AS quarantined,
  (SELECT count(*) FROM cursor)::int AS cursor_rows,
  (SELECT coalesce(array_agg(((extract(epoch FROM $3::timestamptz) - extract(epoch FROM created_at)) * 1000)::bigint),
                   '{}')
   FROM inserted)::text[] AS inserted_lateness_ms
`;

// The run's token is checked in the same statement: were it no longer the lease's, the function
// raises and the whole statement, every CTE's write included, is undone (run-lease.ts).
const FENCED_SQL = SQL_TEMPLATE.replace("/*fence*/", "ledger_sync_fence($1, 'bills', $17::bigint) AS fenced,");
const UNFENCED_SQL = SQL_TEMPLATE.replace("  /*fence*/\n", "");

type ResultRow = Omit<BillsWindowResult, "insertedLatenessMs"> & {
  cursor_rows: number;
  inserted_lateness_ms: string[];
};

/** The one statement that stores a window, with its parameters (exported for plan tests). */
export function billsWindowStatement(w: BillsWindowWrite): {
  text: string;
  values: unknown[];
  cursorStream: string | null;
} {
  const bills = dedupeById(w.bills);
  const rejected = dedupeByText(w.rejected);
  const cursorStream = w.cursorStream === undefined ? w.stream : w.cursorStream;
  if (w.fence && (w.fence.account !== w.accountName || w.fence.group !== "bills"))
    throw new Error(
      `a bills write of account "${w.accountName}" carries the lease of ${w.fence.group} "${w.fence.account}"`,
    );
  const now = new Date();
  const document = billsDocument(bills);
  const values = [
    w.accountName,
    document.rows,
    now,
    w.stream,
    rejected.map((r) => r.reason),
    rejected.map((r) => r.rawText),
    rejected.map((r) => sha256(r.rawText)),
    JSON.stringify(w.context),
    String(w.cursorMs),
    cursorStream,
    w.source ?? "v2",
    w.resume === undefined || w.resume === null ? null : JSON.stringify(w.resume),
    document.forms,
    document.terms,
    ...timeBounds(bills),
  ];
  if (w.fence) return { text: FENCED_SQL, values: [...values, w.fence.token], cursorStream };
  return { text: UNFENCED_SQL, values, cursorStream };
}

export async function commitBillsWindow(db: Db, w: BillsWindowWrite): Promise<BillsWindowResult> {
  const { text, values, cursorStream } = billsWindowStatement(w);
  // The hot path goes to pg directly (see prisma.ts: Prisma would retain every batch's parameters).
  // Deliberately not a named prepared statement: PostgreSQL's generic plan for it (chosen after
  // five executions) is several times slower than a plan per batch (docs/design/write-path.md).
  const pool = directPool(db);
  const run = (sql: string, params: unknown[]) => (pool ? pool.query(sql, params) : db.$queryRawUnsafe(sql, ...params));
  const write = async () =>
    pool ? (await pool.query<ResultRow>(text, values)).rows : await db.$queryRawUnsafe<ResultRow[]>(text, ...values);
  const rows = await inMadeMonths(
    pool ?? db,
    w.bills.map((b) => b.cTimeMs),
    run,
    write,
  );
  const row = rows[0];
  if (!row || row.cursor_rows !== (cursorStream === null ? 0 : 1))
    throw new Error("bills window write returned no result");
  return {
    inserted: row.inserted,
    revised: row.revised,
    upserted: row.upserted,
    quarantined: row.quarantined,
    insertedLatenessMs: row.inserted_lateness_ms.map(Number),
  };
}

/** The batch's first and last bill time: the probe by primary key is planned in those months only. */
function timeBounds(bills: readonly Bill[]): [Date | null, Date | null] {
  if (bills.length === 0) return [null, null];
  let lo = Infinity;
  let hi = -Infinity;
  for (const b of bills) {
    if (b.cTimeMs < lo) lo = b.cTimeMs;
    if (b.cTimeMs > hi) hi = b.cTimeMs;
  }
  return [new Date(lo), new Date(hi)];
}

/**
 * A bill can come twice in a batch (two windows' pages held it): the later answer wins, since ON
 * CONFLICT cannot touch one row twice in a statement.
 */
function dedupeById(bills: Bill[]): Bill[] {
  const byId = new Map<string, Bill>();
  for (const b of bills) byId.set(b.billId, b);
  return byId.size === bills.length ? bills : [...byId.values()];
}

/** Likewise for quarantine rows, keyed by their exact text (the same bad item seen in two windows). */
function dedupeByText(rejected: RejectedItem[]): RejectedItem[] {
  const byText = new Map<string, RejectedItem>();
  for (const r of rejected) if (!byText.has(r.rawText)) byText.set(r.rawText, r);
  return byText.size === rejected.length ? rejected : [...byText.values()];
}
