// `ledger-sync storage drop-legacy`: the old bills table, kept as bills_legacy by the swap
// migration (20261127200100_bills_view), dropped on request once the upgrade is finished: every
// account copied, the view in place, every closed period checked through it. Nothing else ever
// drops it.
import type pg from "pg";
import { BILLS_VIEW_MIGRATION } from "./data-steps.ts";

export interface LegacyBills {
  /** Bills it holds. */
  bills: number;
  /** Its heap (with TOAST) and its indexes, in bytes. */
  tableBytes: number;
  indexBytes: number;
}

export type LegacyState =
  | { state: "absent" }
  | { state: "unfinished"; reason: string; table: LegacyBills }
  | { state: "droppable"; table: LegacyBills };

const STATE = `
SELECT (SELECT relkind::text FROM pg_class WHERE oid = to_regclass('bills')) AS bills_kind,
       to_regclass('bills_legacy') IS NOT NULL AS legacy,
       to_regclass('bill_rows_upgrade') IS NOT NULL AS progress`;

/** The closes made before the swap of accounts that have no row of bill_rows_upgrade (SQL). */
export const CLOSED_BEFORE_SWAP_UNCHECKED = `
SELECT p.account_name FROM period_closes p
WHERE NOT EXISTS (SELECT 1 FROM bill_rows_upgrade u WHERE u.account_name = p.account_name)
  AND p.closed_at < coalesce((SELECT max(finished_at) FROM _prisma_migrations
                              WHERE migration_name = '${BILLS_VIEW_MIGRATION}' AND rolled_back_at IS NULL),
                             'infinity')`;

const PROGRESS = `
SELECT count(*) FILTER (WHERE done_at IS NULL)::int AS not_copied,
       count(*) FILTER (WHERE closes_checked_at IS NULL)::int AS not_checked,
       (SELECT count(DISTINCT account_name)::int FROM (${CLOSED_BEFORE_SWAP_UNCHECKED}) x) AS closes_unchecked
FROM bill_rows_upgrade`;

const SIZE = `
SELECT (SELECT count(*) FROM bills_legacy)::text AS bills,
       pg_table_size('bills_legacy')::text AS table_bytes,
       pg_indexes_size('bills_legacy')::text AS index_bytes`;

/** Whether bills_legacy exists, and whether the upgrade is finished so that it may go. */
export async function legacyBillsState(client: pg.ClientBase): Promise<LegacyState> {
  const s = (await client.query<{ bills_kind: string | null; legacy: boolean; progress: boolean }>(STATE)).rows[0]!;
  if (!s.legacy) return { state: "absent" };
  const size = (await client.query<{ bills: string; table_bytes: string; index_bytes: string }>(SIZE)).rows[0]!;
  const table = {
    bills: Number(size.bills),
    tableBytes: Number(size.table_bytes),
    indexBytes: Number(size.index_bytes),
  };
  const reason = await unfinished(client, s);
  return reason === undefined ? { state: "droppable", table } : { state: "unfinished", reason, table };
}

async function unfinished(client: pg.ClientBase, s: { bills_kind: string | null; progress: boolean }) {
  if (s.bills_kind !== "v") return "`bills` is not the view over bill_rows (the upgrade's swap has not been applied)";
  if (!s.progress) return "bill_rows_upgrade, the upgrade's progress, is missing";
  const p = (await client.query<{ not_copied: number; not_checked: number; closes_unchecked: number }>(PROGRESS))
    .rows[0]!;
  if (p.not_copied > 0) return `${p.not_copied} account(s) not copied whole`;
  if (p.not_checked + p.closes_unchecked > 0)
    return `the closed periods of ${p.not_checked + p.closes_unchecked} account(s) not yet checked through the view`;
  return undefined;
}

/** Drops bills_legacy if it may go (looked at again under its lock); the state it found. */
export async function dropLegacyBills(client: pg.ClientBase): Promise<LegacyState> {
  await client.query("BEGIN");
  try {
    const exists = await client.query<{ legacy: boolean }>("SELECT to_regclass('bills_legacy') IS NOT NULL AS legacy");
    if (exists.rows[0]!.legacy) await client.query("LOCK TABLE bills_legacy IN ACCESS EXCLUSIVE MODE");
    const state = await legacyBillsState(client);
    if (state.state === "droppable") await client.query("DROP TABLE bills_legacy");
    await client.query("COMMIT");
    return state;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
