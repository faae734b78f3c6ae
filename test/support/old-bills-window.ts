// The bills window write as ledger-sync wrote it before bill_rows (issue 32), frozen: tests that
// build the books of a database migrated only part of the way (to prove a later migration, the
// bill_rows upgrade included) write them as the release of that time did.
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
import type { BillSource } from "../../src/config/accounts.ts";
import type { Bill, RejectedItem } from "../../src/exchange/bill-item.ts";
import { directPool, type Db } from "../../src/store/prisma.ts";
import type { RunFence } from "../../src/store/run-lease.ts";
import { quarantineUpsertSql, sha256 } from "../../src/store/quarantine.ts";

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
// from what is stored, a first one included, is.
const CONTENT_DIFFERS = `
  (b.coin, b.symbol, b.business_type, b.amount::text, b.balance::text, b.fill_fee::text, b.created_at_ms)
  IS DISTINCT FROM
  (i.coin, i.symbol, i.business_type, i.amount::text, i.balance::text, i.fill_fee::text, i.created_at_ms)
  OR (i.transfer_reason IS NOT NULL AND i.transfer_reason IS DISTINCT FROM b.transfer_reason)`;

// New bills, by far the most (a backfill writes nothing else), take the cheap path: INSERT ... ON
// CONFLICT DO NOTHING, with no per-row lookup and no DO UPDATE machinery. When the insert took every
// input row, nothing else runs (a one-time filter). Otherwise every input row is looked up by
// primary key, and only a stored bill whose content differs is updated, by row id (the trigger
// files the old version in bill_revisions). A bill read again unchanged is not written at all: no
// row version, no index entry, no trigger (a bill is re-read about ten times in its first minutes,
// under the default lookback). When it was last read is the run's (sync_runs: its window and end).
// The CTEs share one snapshot, so the lookup finds only bills stored before this statement, never
// the ones it just inserted.
//
// The probe is a LATERAL ... LIMIT 1 with the account as "(SELECT $1)": written as a plain join, an
// account the statistics do not know yet (a new account: "1 row" estimated) gets an index scan on
// the account alone, i.e. all its stored bills read for every input row, slower with every batch.
// The InitPlan hides the account from the planner, which then plans for an average account, where
// the unique key is the clear choice; LIMIT 1 keeps the lookup a per-row probe (it cannot be
// flattened into a join). Figures for both choices: docs/design/write-path.md.
// (Comments stay out of the SQL text: pg_stat_activity shows only its first 1 kB, and operators
// and the crash test recognise the statement there by its INSERT.)
const SQL_TEMPLATE = `
WITH input AS (
  SELECT * FROM json_to_recordset($2::json)
    AS t(bill_id text, coin text, symbol text, business_type text, amount numeric, balance numeric,
         fill_fee numeric, created_at_ms bigint, raw jsonb, transfer_reason text)
  WHERE set_config('ledger_sync.revision', 'on', true) = 'on'
),
inserted AS (
  INSERT INTO bills AS b (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee,
                          created_at, created_at_ms, raw, first_seen_at, last_seen_at, source, transfer_reason)
  SELECT $1, i.bill_id, i.coin, i.symbol, i.business_type, i.amount, i.balance, i.fill_fee,
         timestamptz 'epoch' + i.created_at_ms * interval '1 millisecond', i.created_at_ms, i.raw,
         $3, $3, $11, i.transfer_reason
  FROM input i
  ON CONFLICT (account_name, bill_id) DO NOTHING
  RETURNING bill_id, created_at_ms
),
known AS (
  SELECT b.row_id, b.created_at_ms AS old_ms, i.*, ${CONTENT_DIFFERS} AS differs
  FROM input i
  CROSS JOIN LATERAL (
    SELECT b.ctid AS row_id, b.* FROM bills b
    WHERE b.account_name = (SELECT $1::text) AND b.bill_id = i.bill_id
    LIMIT 1
  ) b
  WHERE (SELECT count(*) FROM inserted) < (SELECT count(*) FROM input)
),
updated AS (
  UPDATE bills AS b SET
    coin = k.coin, symbol = k.symbol, business_type = k.business_type,
    amount = k.amount, balance = k.balance, fill_fee = k.fill_fee,
    created_at = timestamptz 'epoch' + k.created_at_ms * interval '1 millisecond', created_at_ms = k.created_at_ms,
    raw = k.raw,
    transfer_reason = coalesce(k.transfer_reason, b.transfer_reason),
    last_seen_at = $3
  FROM known k
  WHERE k.differs AND b.ctid = k.row_id AND b.account_name = $1 AND b.bill_id = k.bill_id
  RETURNING b.bill_id, b.created_at_ms, k.old_ms
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
  FROM (SELECT min(t) AS m FROM (
          SELECT created_at_ms AS t FROM inserted
          UNION ALL SELECT created_at_ms FROM updated
          UNION ALL SELECT old_ms FROM updated) x) d
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
  (SELECT coalesce(array_agg((extract(epoch FROM $3::timestamptz) * 1000)::bigint - created_at_ms), '{}')
   FROM inserted)::text[] AS inserted_lateness_ms
`;

// The run's token is checked in the same statement: were it no longer the lease's, the function
// raises and the whole statement, every CTE's write included, is undone (run-lease.ts).
const FENCED_SQL = SQL_TEMPLATE.replace("/*fence*/", "ledger_sync_fence($1, 'bills', $13::bigint) AS fenced,");
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
  const values = [
    w.accountName,
    billsDocument(bills),
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
  const rows = pool
    ? (await pool.query<ResultRow>(text, values)).rows
    : await db.$queryRawUnsafe<ResultRow[]>(text, ...values);
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

/**
 * The bills as one JSON array of rows, read by json_to_recordset. One native JSON.stringify, where
 * nine parallel array parameters cost pg a quoting pass over every element (the raw JSON most of
 * all) and PostgreSQL an array parse each. Amounts go as JSON strings, so numeric_in reads exactly
 * the digits we validated, scale included; the time as a JSON number is a safe integer.
 */
function billsDocument(bills: Bill[]): string {
  return JSON.stringify(
    bills.map((b) => ({
      bill_id: b.billId,
      coin: b.coin,
      symbol: b.symbol,
      business_type: b.businessType,
      amount: b.amount,
      balance: b.balance,
      fill_fee: b.fillFee,
      created_at_ms: b.cTimeMs,
      raw: b.raw,
      transfer_reason: b.transferReason ?? null,
    })),
  );
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
