// `ledger-sync bill show ID`: every version of one bill and the span over which the books held it, so
// that the books as they stood at any past instant can be re-created. The replaced versions are
// bill_revisions' rows, the version held now is the bills row. A version was held from when it was
// stored until the next one replaced it: the first from the bill's first storing, each later one from
// its predecessor's replaced_at. (bill_revisions.first_seen_at cannot give a later version's start: the
// guard trigger copies it from the row it replaces, whose first_seen_at is the bill's first storing.)
// Read-only.
import { accountKey } from "../store/ledger-rows.ts";
import type { Db } from "../store/prisma.ts";
import { textTable } from "../statement/text-table.ts";

export interface BillContent {
  coin: string;
  /** null: the bill belongs to no contract. */
  symbol: string | null;
  businessType: string;
  amount: string;
  balance: string;
  fillFee: string;
  transferReason: string | null;
  /** The exchange's creation time (ISO, UTC, ms): a revision may move it. */
  createdAt: string;
}

export interface BillVersion extends BillContent {
  /** 1 for the first version stored, in the order they were held. */
  version: number;
  /** When the books began to hold this version: the bill's first storing, or when it replaced the one before. */
  from: string;
  /** When a newer version replaced it (excluded); null: the version stored now. */
  until: string | null;
  /** bill_revisions.id of a replaced version; null for the stored one. */
  revisionId: string | null;
}

export interface BillHistory {
  account: string;
  billId: string;
  /** The endpoint that first stored the bill (v2 / v3); null when its row is not stored. */
  source: string | null;
  /** false: only replaced versions are stored (the bill's month archived, or its row removed by hand). */
  stored: boolean;
  /** Oldest first. */
  versions: BillVersion[];
  /** --as-of: the version the books held then (null: none). */
  asOf?: { at: string; version: number | null; state: "in force" | "not yet stored" | "no longer stored" };
}

/** A request that cannot be answered as asked: exit 2, the message says why. */
export class BillLookupError extends Error {
  override name = "BillLookupError";
}

interface VersionRow {
  bill_id: string;
  revision_id: string | null;
  coin: string;
  symbol: string | null;
  business_type: string;
  amount: string;
  balance: string;
  fill_fee: string;
  transfer_reason: string | null;
  created_at_ms: string;
  first_seen_at: Date;
  replaced_at: Date | null;
  source: string | null;
}

// The replaced versions (by the revisions' key) and the stored one (bill_rows' id index), of the bills
// asked, in the order they were held: a replaced version before the next, the stored one last.
const VERSIONS_SQL = `SELECT v.*
FROM (
  SELECT r.bill_id, r.id::text AS revision_id, r.coin, r.symbol, r.business_type, r.amount::text AS amount,
         r.balance::text AS balance, r.fill_fee::text AS fill_fee, r.transfer_reason,
         r.created_at_ms::text AS created_at_ms, r.first_seen_at, r.replaced_at, NULL::text AS source
  FROM bill_revisions r
  WHERE r.account_name = $1 AND r.bill_id = ANY($2::text[])
  UNION ALL
  SELECT b.bill_id, NULL, b.coin, b.symbol, b.business_type, b.amount::text, b.balance::text, b.fill_fee::text,
         b.transfer_reason, b.created_at_ms::text, b.first_seen_at, NULL, b.source
  FROM ledger_bills b
  WHERE b.account_id = ${accountKey("$1")} AND b.bill_key = ANY($2::text[]::numeric[]) AND b.bill_id = ANY($2::text[])
) v
ORDER BY v.bill_id::numeric, v.replaced_at NULLS LAST, v.revision_id::bigint`;

/** Every version of each bill asked (that has one), by bill id, oldest first. */
export async function readBillVersions(
  db: Db,
  account: string,
  billIds: readonly string[],
): Promise<Map<string, { versions: BillVersion[]; source: string | null; stored: boolean }>> {
  const rows = await db.$queryRawUnsafe<VersionRow[]>(VERSIONS_SQL, account, billIds);
  const byBill = new Map<string, VersionRow[]>();
  for (const r of rows) {
    const held = byBill.get(r.bill_id);
    if (held) held.push(r);
    else byBill.set(r.bill_id, [r]);
  }
  const out = new Map<string, { versions: BillVersion[]; source: string | null; stored: boolean }>();
  for (const [billId, held] of byBill) {
    const current = held.find((r) => r.revision_id === null);
    out.set(billId, { versions: chainVersions(held), source: current?.source ?? null, stored: current !== undefined });
  }
  return out;
}

function chainVersions(rows: VersionRow[]): BillVersion[] {
  return rows.map((r, i) => ({
    version: i + 1,
    from: (i === 0 ? r.first_seen_at : (rows[i - 1]!.replaced_at ?? r.first_seen_at)).toISOString(),
    until: r.replaced_at?.toISOString() ?? null,
    revisionId: r.revision_id,
    coin: r.coin,
    symbol: r.symbol,
    businessType: r.business_type,
    amount: r.amount,
    balance: r.balance,
    fillFee: r.fill_fee,
    transferReason: r.transfer_reason,
    createdAt: new Date(Number(r.created_at_ms)).toISOString(),
  }));
}

/** The accounts that hold the bill (a stored row or a replaced version), by name. */
async function accountsHolding(db: Db, billId: string): Promise<string[]> {
  const rows = await db.$queryRawUnsafe<{ account: string }[]>(
    `SELECT k.name AS account
     FROM bill_rows b
     JOIN account_keys k ON k.id = b.account_id
     WHERE b.bill_id = $1::text::numeric AND b.bill_id::text = $1::text
     UNION
     SELECT r.account_name
     FROM bill_revisions r
     WHERE r.bill_id = $1::text
     ORDER BY 1`,
    billId,
  );
  return rows.map((r) => r.account);
}

/** Months detached to files: a bill in one of them is not in the database (archived-months.ts). */
async function archivedNote(db: Db): Promise<string> {
  const rows = await db.$queryRawUnsafe<{ month: string }[]>(
    `SELECT to_char(month, 'YYYY-MM') AS month
     FROM archived_months
     ORDER BY month`,
  );
  return rows.length === 0
    ? ""
    : ` (months archived to files are not searched: ${rows.map((r) => r.month).join(", ")})`;
}

export async function billHistory(
  db: Db,
  o: { billId: string; account?: string; asOfMs?: number },
): Promise<BillHistory> {
  const holding = await accountsHolding(db, o.billId);
  const candidates = o.account === undefined ? holding : holding.filter((a) => a === o.account);
  if (candidates.length === 0) {
    const elsewhere = o.account !== undefined && holding.length > 0 ? ` (it is stored for ${holding.join(", ")})` : "";
    throw new BillLookupError(
      `no bill ${o.billId} is stored${o.account === undefined ? "" : ` for account "${o.account}"`}` +
        `${elsewhere}${await archivedNote(db)}`,
    );
  }
  if (candidates.length > 1)
    throw new BillLookupError(
      `bill ${o.billId} is stored for several accounts (${candidates.join(", ")}): name one with --account`,
    );
  const account = candidates[0]!;
  const found = (await readBillVersions(db, account, [o.billId])).get(o.billId)!;
  return {
    account,
    billId: o.billId,
    source: found.source,
    stored: found.stored,
    versions: found.versions,
    ...(o.asOfMs === undefined ? {} : { asOf: versionAt(found.versions, o.asOfMs) }),
  };
}

/** The version held at `atMs`: from ≤ at < until. */
export function versionAt(versions: BillVersion[], atMs: number): NonNullable<BillHistory["asOf"]> {
  const at = new Date(atMs).toISOString();
  const held = versions.find((v) => Date.parse(v.from) <= atMs && (v.until === null || atMs < Date.parse(v.until)));
  if (held) return { at, version: held.version, state: "in force" };
  // Versions follow one another without a gap, so the books held none before the first or after the last.
  if (versions.length === 0 || atMs < Date.parse(versions[0]!.from))
    return { at, version: null, state: "not yet stored" };
  return { at, version: null, state: "no longer stored" };
}

const dash = (v: string | null) => v ?? "-";

/** `bill show` on a terminal: a heading, one line per version, and the --as-of answer. */
export function formatBillHistory(h: BillHistory): string {
  const first = h.versions[0]!;
  const head =
    `bill ${h.billId} of account "${h.account}": ${h.versions.length} version(s), first stored ${first.from}` +
    (h.source ? ` (from the ${h.source} endpoint)` : "") +
    (h.stored ? "" : "; no version is stored now (its month archived, or its row removed)");
  const marked = h.asOf?.version ?? null;
  const table = textTable(
    [
      { header: "" },
      { header: "version", right: true },
      { header: "held from" },
      { header: "until (replaced)" },
      { header: "created at" },
      { header: "coin" },
      { header: "symbol" },
      { header: "business type" },
      { header: "amount", right: true },
      { header: "balance", right: true },
      { header: "fill fee", right: true },
      { header: "transfer reason" },
    ],
    h.versions.map((v) => [
      v.version === marked ? "*" : "",
      String(v.version),
      v.from,
      v.until ?? (h.stored ? "(held now)" : "-"),
      v.createdAt,
      v.coin,
      dash(v.symbol),
      v.businessType,
      v.amount,
      v.balance,
      v.fillFee,
      dash(v.transferReason),
    ]),
  );
  const out = [head, ...table];
  if (h.asOf)
    out.push(
      h.asOf.version === null
        ? `as of ${h.asOf.at}: the bill was ${h.asOf.state}`
        : `as of ${h.asOf.at}: version ${h.asOf.version} (*) was in force`,
    );
  return `${out.join("\n")}\n`;
}
