// Reading period_closes: the close that currently seals each period is the newest of its chain, the
// row no later close supersedes.
import type { Db } from "../store/prisma.ts";
import { closeFormSql } from "./seal-chain.ts";

export interface PeriodCloseRow {
  id: string;
  account: string;
  period: string;
  fromMs: number;
  toMs: number;
  billCount: number;
  digest: string;
  closedBy: string;
  dbUser: string;
  closedAt: Date;
  supersedes: string | null;
  /** How many times the period was closed (this close and those it superseded, directly or not). */
  closes: number;
  /** The roll-forward's status when closed (null: closed before the roll-forward existed). */
  rollForward: string | null;
  /** Why it was closed although not tied (--accept-untied); null when tied. */
  untiedReason: string | null;
  /** The canonical line form its digest was made in (close_seals.form; 1 before the chain). */
  form: number;
}

interface Row {
  id: string;
  account: string;
  period: string;
  from_ms: string;
  to_ms: string;
  bill_count: number;
  digest: string;
  closed_by: string;
  db_user: string;
  closed_at: Date;
  supersedes: string | null;
  closes: number;
  rollforward: string | null;
  untied_reason: string | null;
  form: number;
}

export interface CloseFilter {
  account?: string;
  /** Only closes whose period overlaps [fromMs, toMs] (both included). */
  fromMs?: number;
  toMs?: number;
  /** ...or whose id is one of these (still only when they are current). */
  orIds?: string[];
}

/** The current close of every closed period that matches, in account and period order. */
export async function currentCloses(db: Db, f: CloseFilter = {}): Promise<PeriodCloseRow[]> {
  const rows = await db.$queryRawUnsafe<Row[]>(
    currentClosesSql("$1", "$2", "$3", "$4"),
    f.account ?? null,
    String(f.fromMs ?? Number.MIN_SAFE_INTEGER),
    String(f.toMs ?? Number.MAX_SAFE_INTEGER),
    f.orIds ?? [],
  );
  return rows.map((r) => ({
    id: r.id,
    account: r.account,
    period: r.period,
    fromMs: Number(r.from_ms),
    toMs: Number(r.to_ms),
    billCount: r.bill_count,
    digest: r.digest,
    closedBy: r.closed_by,
    dbUser: r.db_user,
    closedAt: r.closed_at,
    supersedes: r.supersedes,
    closes: r.closes,
    rollForward: r.rollforward,
    untiedReason: r.untied_reason,
    form: r.form,
  }));
}

/**
 * SQL of currentCloses' rows; the arguments are SQL expressions (parameters, or another statement's
 * values when it embeds this one) of the account (NULL: all), the range and the ids (text[]).
 */
export function currentClosesSql(account: string, fromMs: string, toMs: string, orIds: string): string {
  return `SELECT p.id::text, p.account_name AS account, p.period, p.period_start_ms::text AS from_ms,
            p.period_end_ms::text AS to_ms, p.bill_count, p.digest, p.closed_by, p.db_user, p.closed_at,
            p.supersedes::text, p.rollforward->>'status' AS rollforward, p.untied_reason,
            (SELECT count(*)::int FROM period_closes x WHERE x.account_name = p.account_name
               AND x.period_start_ms = p.period_start_ms AND x.period_end_ms = p.period_end_ms) AS closes,
            ${closeFormSql("p")} AS form
     FROM period_closes p
     WHERE NOT EXISTS (SELECT 1 FROM period_closes n WHERE n.account_name = p.account_name AND n.supersedes = p.id)
       AND (${account}::text IS NULL OR p.account_name = ${account})
       AND ((p.period_end_ms > ${fromMs}::bigint AND p.period_start_ms <= ${toMs}::bigint)
            OR p.id::text = ANY(${orIds}::text[]))
     ORDER BY p.account_name, p.period_start_ms, p.period_end_ms`;
}
