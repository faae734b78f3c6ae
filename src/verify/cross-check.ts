// The cross-check: a range read again through the other endpoint (v2 bills or v3 income) and
// compared bill by bill with what is stored. Two endpoints of one exchange, read independently,
// agreeing with the books is evidence no single-source audit gives: a bill the store lacks, one
// the exchange no longer serves, or content that differs in any field. Read-only: nothing it
// reads is written; its result is recorded as a run ("cross-check" in sync_runs).
import type { BillSource } from "../config/accounts.ts";
import type { Bill } from "../exchange/bill-item.ts";
import { accountKey, instantOf } from "../store/ledger-rows.ts";
import type { Db } from "../store/prisma.ts";
import { recordRun } from "../store/sync-runs.ts";
import { readExchangeBills, type ExchangeReadOptions } from "./exchange-read.ts";

/** The run's name in sync_runs. */
export const CROSS_CHECK_STREAM = "cross-check";
/** Ids listed per kind of difference in the run's detail and the report (counts are always whole). */
const LISTED = 50;
/** A range is read and compared a day at a time: memory holds one day's bills, not the range's. */
const CHUNK_MS = 86_400_000;

export interface FieldDifference {
  field: string;
  stored: string | null;
  exchange: string | null;
}

export interface CrossCheckResult {
  account: string;
  /** The endpoint read for the check (the other one than the account's BILLS_SOURCE). */
  source: BillSource;
  fromMs: number;
  toMs: number;
  exchangeBills: number;
  storedBills: number;
  /** Served by the exchange, not stored. */
  missingInStore: string[];
  /** Stored, not served by the exchange. */
  missingOnExchange: string[];
  different: { billId: string; fields: FieldDifference[] }[];
  requests: number;
  ok: boolean;
}

/** What to read: the range, through the endpoint `source` (the other one than BILLS_SOURCE). */
export type CrossCheckOptions = ExchangeReadOptions;

export async function crossCheck(o: CrossCheckOptions): Promise<CrossCheckResult> {
  return recordRun(
    o.db,
    { accountName: o.account, stream: CROSS_CHECK_STREAM, windowFromMs: o.fromMs, windowToMs: o.toMs },
    () => compareRange(o),
    (r) => ({
      outcome: r.ok ? "ok" : "failed",
      pages: r.requests,
      recordsFetched: r.exchangeBills,
      recordsNew: 0,
      recordsChanged: 0,
      quarantined: 0,
      detail: {
        source: r.source,
        storedBills: r.storedBills,
        missingInStore: { count: r.missingInStore.length, ids: r.missingInStore.slice(0, LISTED) },
        missingOnExchange: { count: r.missingOnExchange.length, ids: r.missingOnExchange.slice(0, LISTED) },
        different: { count: r.different.length, bills: r.different.slice(0, LISTED) },
      },
      ...(r.ok ? {} : { error: describeDifferences(r) }),
    }),
    () => o.signal?.aborted === true,
  );
}

/** "3 missing in the store, 1 missing on the exchange, 2 different (v3 read)". */
export function describeDifferences(r: CrossCheckResult): string {
  return (
    `${r.missingInStore.length} missing in the store, ${r.missingOnExchange.length} missing on the exchange, ` +
    `${r.different.length} different (read through ${r.source})`
  );
}

async function compareRange(o: CrossCheckOptions): Promise<CrossCheckResult> {
  const result: CrossCheckResult = {
    account: o.account,
    source: o.source,
    fromMs: o.fromMs,
    toMs: o.toMs,
    exchangeBills: 0,
    storedBills: 0,
    missingInStore: [],
    missingOnExchange: [],
    different: [],
    requests: 0,
    ok: true,
  };
  for (let from = o.fromMs; from <= o.toMs; from += CHUNK_MS) {
    const to = Math.min(o.toMs, from + CHUNK_MS - 1);
    const { bills: served, requests } = await readThrough({ ...o, fromMs: from, toMs: to });
    const stored = await storedRange(o.db, o.account, from, to);
    result.requests += requests;
    result.exchangeBills += served.size;
    result.storedBills += stored.size;
    for (const [id, bill] of served) {
      const row = stored.get(id);
      if (!row) {
        result.missingInStore.push(id);
        continue;
      }
      const fields = compareBill(row, bill);
      if (fields.length > 0) result.different.push({ billId: id, fields });
    }
    for (const id of stored.keys()) if (!served.has(id)) result.missingOnExchange.push(id);
  }
  const byId = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : 1);
  result.missingInStore.sort(byId);
  result.missingOnExchange.sort(byId);
  result.different.sort((a, b) => byId(a.billId, b.billId));
  result.ok = result.missingInStore.length + result.missingOnExchange.length + result.different.length === 0;
  o.logger.info(
    {
      account: o.account,
      source: o.source,
      fromMs: o.fromMs,
      toMs: o.toMs,
      ok: result.ok,
      detail: describeDifferences(result),
    },
    "cross-check finished",
  );
  return result;
}

/** Every bill the endpoint serves in [fromMs, toMs], read as a sync would and kept in memory. */
function readThrough(o: CrossCheckOptions): Promise<{ bills: Map<string, Bill>; requests: number }> {
  return readExchangeBills({ ...o, logger: o.logger.child({ stream: CROSS_CHECK_STREAM }) });
}

interface StoredRow {
  coin: string;
  /** NULL: no contract (the parsers give null for it too, so null equals null). */
  symbol: string | null;
  business_type: string;
  amount: string;
  balance: string;
  fill_fee: string;
  created_at_ms: string;
  transfer_reason: string | null;
}

async function storedRange(db: Db, account: string, fromMs: number, toMs: number): Promise<Map<string, StoredRow>> {
  const rows = await db.$queryRawUnsafe<(StoredRow & { bill_id: string })[]>(
    `SELECT bill_id, coin, symbol, business_type,
            amount::text AS amount, balance::text AS balance, fill_fee::text AS fill_fee,
            created_at_ms::text AS created_at_ms, transfer_reason
     FROM ledger_bills
     WHERE account_id = ${accountKey("$1")} AND created_at BETWEEN ${instantOf("$2")} AND ${instantOf("$3")}`,
    account,
    fromMs,
    toMs,
  );
  return new Map(rows.map((r) => [r.bill_id, r]));
}

/**
 * Every field, exactly (decimals as text, digit for digit). A transfer reason only where both
 * sides have one: an endpoint that does not send it (v2 may not) says nothing about it.
 */
function compareBill(row: StoredRow, b: Bill): FieldDifference[] {
  const pairs: [string, string | null, string | null][] = [
    ["coin", row.coin, b.coin],
    ["symbol", row.symbol, b.symbol],
    ["businessType", row.business_type, b.businessType],
    ["amount", row.amount, b.amount],
    ["balance", row.balance, b.balance],
    ["fillFee", row.fill_fee, b.fillFee],
    ["createdAtMs", row.created_at_ms, String(b.cTimeMs)],
  ];
  if (row.transfer_reason !== null && b.transferReason !== undefined && b.transferReason !== null)
    pairs.push(["transferReason", row.transfer_reason, b.transferReason]);
  return pairs.filter(([, s, e]) => s !== e).map(([field, stored, exchange]) => ({ field, stored, exchange }));
}
