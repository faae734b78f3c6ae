// The canonical form of a period's bills, and its SHA-256. docs/schema.md ("Closed periods") gives
// the same query for psql, so anyone can recompute a close's digest with `psql -XAt | sha256sum`:
// one line per bill, in ledger order, each ended by "\n"; the digest is the SHA-256 of those bytes.
//
// A line is fixed columns separated by a tab: bill_id, created_at_ms, coin, symbol, business_type,
// amount, balance, fill_fee, transfer_reason. Numbers are PostgreSQL's own text (NUMERIC keeps its
// scale: 1.50 stays "1.50", as the exchange sent it); text columns are JSON strings (to_json), so
// that no tab, line break or quote in a value can shift a column; a missing transfer_reason is null.
// A symbol of no contract (NULL) is written "", as it was stored before symbol could be NULL: the
// periods closed then re-digest to the same hash.
//
// Form 2 (closes from issue 33 on) adds a tenth column: the bill's payload, the JSON text the
// exchange sent, byte for byte, as a JSON string (to_json), so the digest and the Merkle leaves
// cover the original too. A close says its form (close_seals.form); one made before has form 1, and
// keeps its digest: every reader recomputes a close's digest in the close's own form.
import type { Db } from "../store/prisma.ts";

/** The form new closes are made in. */
export const CURRENT_FORM = 2;

/** The canonical line of a bill row `b` in form 1 (SQL). */
export const CANONICAL_LINE = `b.bill_id || E'\\t' || b.created_at_ms
  || E'\\t' || to_json(b.coin) || E'\\t' || to_json(coalesce(b.symbol, ''))
  || E'\\t' || to_json(b.business_type) || E'\\t' || b.amount || E'\\t' || b.balance || E'\\t' || b.fill_fee
  || E'\\t' || coalesce(to_json(b.transfer_reason)::text, 'null')`;

/** The bills `b` of account $1 created in [$2, $3) (epoch ms), the start included, the end excluded. */
export const PERIOD_BILLS = `bills b
  WHERE b.account_name = $1 AND b.created_at_ms >= $2::bigint AND b.created_at_ms < $3::bigint
    AND b.created_at >= timestamptz 'epoch' + $2::bigint * interval '1 millisecond'
    AND b.created_at < timestamptz 'epoch' + $3::bigint * interval '1 millisecond'`;

/** The canonical line of a bill row `b` (with the view's `payload`) in a close's form (SQL). */
export function canonicalLine(form: number): string {
  if (form === 1) return CANONICAL_LINE;
  if (form === 2) return `${CANONICAL_LINE} || E'\\t' || coalesce(to_json(b.payload)::text, 'null')`;
  throw new Error(`no canonical line form ${form}: this ledger-sync knows forms 1 and 2`);
}

/** The period's bills as (bill_id, created_at_ms, line) rows in `form` (SQL). */
export const periodLines = (form: number): string =>
  `SELECT b.bill_id, b.created_at_ms, ${canonicalLine(form)} AS line FROM ${PERIOD_BILLS}`;

/** The period's lines in form 1 (what closes made before form 2 sealed). */
export const PERIOD_LINES = periodLines(1);

/** SQL aggregate over rows of PERIOD_LINES: hex SHA-256 of the lines in ledger order, each ended by a line feed. */
export const DIGEST_OF_LINES = `encode(sha256(convert_to(coalesce(
    string_agg(line || E'\\n', '' ORDER BY created_at_ms, bill_id::numeric), ''), 'UTF8')), 'hex')`;

/** SQL of a line's own SHA-256 (bytea): what period_close_bills keeps per bill. */
export const LINE_SHA256 = "sha256(convert_to(line, 'UTF8'))";

const periodDigestSql = (form: number) =>
  `SELECT ${DIGEST_OF_LINES} AS digest, count(*)::int AS bills FROM (${periodLines(form)}) l`;

export interface PeriodDigest {
  digest: string;
  bills: number;
}

export interface PeriodRange {
  account: string;
  fromMs: number;
  toMs: number;
}

/** The digest of the period's bills as stored now, in `form` (a close's: close_seals.form). */
export async function periodDigest(db: Db, r: PeriodRange, form: number): Promise<PeriodDigest> {
  const [row] = await db.$queryRawUnsafe<PeriodDigest[]>(
    periodDigestSql(form),
    r.account,
    String(r.fromMs),
    String(r.toMs),
  );
  return row!;
}
