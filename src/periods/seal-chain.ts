// The closes' hash chain as the database holds it (close_seals, migration 20261129000000_close_seals):
// each seal joined to its close, in chain order, and the account's tip, where the next close links.
// docs/design/audit-chain.md.
import type { Db } from "../store/prisma.ts";
import { GENESIS_HEAD, sealHead, type SealFields } from "./seal-record.ts";

/**
 * SQL of the canonical line form of the close row `close` (an alias of period_closes): its seal's,
 * or 1 for a close without one (made before the chain, not sealed by migrate yet).
 */
export const closeFormSql = (close: string): string =>
  `coalesce((SELECT s.form::int FROM close_seals s
             WHERE s.account_name = ${close}.account_name AND s.close_id = ${close}.id), 1)`;

/** A seal with the close it seals: the fields its head hashes, and the head as stored. */
export interface StoredSeal {
  closeId: string;
  fields: SealFields;
  head: string;
  /** The close's row, for naming it. */
  closedBy: string;
  closedAt: Date;
}

/** The chain cannot be extended or read as one: named, never worked around. */
export class SealChainError extends Error {
  override name = "SealChainError";
}

/**
 * A close and its seal as sealsSql gives them: a close without a seal has the seal's columns NULL,
 * a seal whose close is gone (only a superuser with the triggers off can do that) the close's.
 */
export interface SealRow {
  close_id: string;
  account: string;
  period: string | null;
  from_ms: string | null;
  to_ms: string | null;
  bills: number | null;
  digest: string | null;
  closed_by: string | null;
  closed_at: Date | string | null;
  closed_at_ms: string | null;
  form: number | null;
  merkle_root: string | null;
  previous_head: string | null;
  head: string | null;
}

/** SQL of the account's closes and seals, in close order; `account` is the SQL expression of its name. */
export const sealsSql = (account: string) => `
SELECT coalesce(c.id, s.close_id)::text AS close_id, coalesce(c.account_name, s.account_name) AS account,
       c.period, c.period_start_ms::text AS from_ms, c.period_end_ms::text AS to_ms, c.bill_count AS bills,
       c.digest, c.closed_by, c.closed_at, s.closed_at_ms::text, s.form, s.merkle_root, s.previous_head, s.head
FROM (SELECT * FROM period_closes WHERE account_name = ${account}) c
FULL JOIN (SELECT * FROM close_seals WHERE account_name = ${account}) s
  ON s.account_name = c.account_name AND s.close_id = c.id
ORDER BY coalesce(c.id, s.close_id)`;

/** The account's closes as the chain check reads them: sealed, unsealed, and seals without a close. */
export interface AccountSeals {
  seals: StoredSeal[];
  /** Closes without a seal. */
  unsealed: { closeId: string; period: string }[];
  /** Seals whose close row is gone. */
  orphans: { closeId: string; head: string }[];
}

export function toAccountSeals(rows: SealRow[]): AccountSeals {
  const out: AccountSeals = { seals: [], unsealed: [], orphans: [] };
  for (const r of rows) {
    if (r.head === null) out.unsealed.push({ closeId: r.close_id, period: r.period ?? "?" });
    else if (r.period === null) out.orphans.push({ closeId: r.close_id, head: r.head });
    else
      out.seals.push({
        closeId: r.close_id,
        fields: {
          account: r.account,
          period: r.period,
          fromMs: Number(r.from_ms),
          toMs: Number(r.to_ms),
          closedAtMs: Number(r.closed_at_ms),
          form: r.form!,
          bills: r.bills!,
          digest: r.digest!,
          merkleRoot: r.merkle_root,
          previous: r.previous_head!,
        },
        head: r.head,
        closedBy: r.closed_by!,
        closedAt: new Date(r.closed_at!),
      });
  }
  return out;
}

/** The account's seals with their closes (every account's when none is named), in close order. */
export async function readSeals(db: Db, account?: string): Promise<StoredSeal[]> {
  if (account !== undefined)
    return toAccountSeals(await db.$queryRawUnsafe<SealRow[]>(sealsSql("$1::text"), account)).seals;
  // Every account's in one statement: the accounts with a seal, each read as above.
  const rows = await db.$queryRawUnsafe<SealRow[]>(
    `SELECT s.* FROM (SELECT DISTINCT account_name FROM close_seals) a
     CROSS JOIN LATERAL (${sealsSql("a.account_name")}) s
     ORDER BY s.account, s.close_id::bigint`,
  );
  return toAccountSeals(rows).seals;
}

/**
 * The head the account's next seal follows: its one seal no other follows, or GENESIS_HEAD before
 * its first. Refused when closes lack their seal (`migrate` seals them) or the chain is not one line.
 */
export async function chainTip(db: Db, account: string): Promise<string> {
  const [row] = await db.$queryRawUnsafe<{ tips: string[]; unsealed: number }[]>(
    `SELECT coalesce(array_agg(s.head ORDER BY s.close_id) FILTER (WHERE s.head IS NOT NULL), '{}') AS tips,
            (SELECT count(*)::int FROM period_closes c WHERE c.account_name = $1
               AND NOT EXISTS (SELECT 1 FROM close_seals x WHERE x.account_name = c.account_name AND x.close_id = c.id))
              AS unsealed
     FROM close_seals s
     WHERE s.account_name = $1
       AND NOT EXISTS (SELECT 1 FROM close_seals n WHERE n.account_name = s.account_name AND n.previous_head = s.head)`,
    account,
  );
  if (row!.unsealed > 0)
    throw new SealChainError(
      `account "${account}" has ${row!.unsealed} close(s) without a seal: run \`ledger-sync migrate\`, ` +
        "whose data step seals the closes made before the chain",
    );
  if (row!.tips.length > 1)
    throw new SealChainError(
      `the seal chain of account "${account}" has ${row!.tips.length} ends ` +
        `(${row!.tips.map((h) => h.slice(0, 16)).join(", ")}): ` +
        "a seal was removed or rewritten; `ledger-sync verify` names it",
    );
  return row!.tips[0] ?? GENESIS_HEAD;
}

/** Whether a stored seal's head is the hash of its fields (its close's row and its own). */
export function headMatches(s: StoredSeal): boolean {
  try {
    return sealHead(s.fields) === s.head;
  } catch {
    return false;
  }
}
