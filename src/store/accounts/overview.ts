// The fleet at a glance (`accounts list`): each registered account with how far its bills are
// behind. Failing first (its last verify failed, or its bills never synced), then by lag: what
// needs a look comes first, whatever the size of the fleet.
import type { Db } from "../prisma.ts";
import type { AccountStatus } from "./columns.ts";

export interface AccountOverview {
  name: string;
  uid: string;
  status: AccountStatus;
  coins: string[];
  source: string | null;
  /** When the bills cursor last moved (null: never synced). */
  lastSuccess: Date | null;
  /** Seconds the bills cursor is behind now (null: never synced). */
  lagSeconds: number | null;
  /** The worker's last incremental verify: pass | fail | null (not run). */
  verify: string | null;
  failing: boolean;
}

export interface OverviewQuery {
  status?: AccountStatus;
  /** Only accounts whose name contains this text. */
  search?: string;
  limit: number;
  offset: number;
}

export async function readAccountOverview(
  db: Db,
  q: OverviewQuery,
): Promise<{ total: number; accounts: AccountOverview[] }> {
  const rows = await db.$queryRawUnsafe<
    {
      name: string;
      uid: string;
      status: string;
      coin_ids: string[] | null;
      bills_source: string | null;
      updated_at: Date | null;
      lag_s: number | null;
      verify: string | null;
      failing: boolean;
      total: number;
    }[]
  >(
    `SELECT a.name, a.uid, a.status, a.coin_ids, a.bills_source, s.updated_at,
            CASE WHEN s.cursor_ms IS NULL THEN NULL
                 ELSE greatest(0, floor(extract(epoch FROM now()) - s.cursor_ms / 1000.0))::int END AS lag_s,
            v.outcome AS verify,
            (a.status = 'active' AND (s.cursor_ms IS NULL OR v.outcome = 'fail')) AS failing,
            count(*) OVER ()::int AS total
     FROM accounts a
     LEFT JOIN sync_state s ON s.account_name = a.name AND s.stream = 'bills'
     LEFT JOIN verify_state v ON v.account_name = a.name
     WHERE ($1::text IS NULL OR a.status = $1) AND ($2::text IS NULL OR strpos(a.name, $2) > 0)
     ORDER BY failing DESC, lag_s DESC NULLS FIRST, a.name
     LIMIT $3 OFFSET $4`,
    q.status ?? null,
    q.search ?? null,
    q.limit,
    q.offset,
  );
  return {
    total: rows[0]?.total ?? 0,
    accounts: rows.map((r) => ({
      name: r.name,
      uid: r.uid,
      status: r.status as AccountStatus,
      coins: r.coin_ids ?? [],
      source: r.bills_source,
      lastSuccess: r.updated_at,
      lagSeconds: r.lag_s,
      verify: r.verify,
      failing: r.failing,
    })),
  };
}
