// What the infrastructure scenarios check in the database, read on the server directly as the admin
// (never through the pooler under test): overlapping runs, bills against the sandbox's truth,
// applied migrations and the schema they leave.
import type { SandboxBill } from "../../../src/sandbox/index.ts";
import { asRows } from "../sandbox-sync.ts";

import { queryOnce as adminQuery } from "../query-once.ts";

export { adminQuery };

/** A run's group: the bills streams ('bills', 'bills-…') share one writer, the snapshot streams another. */
const GROUP = `CASE WHEN stream = 'bills' OR stream LIKE 'bills-%' THEN 'bills'
                    WHEN stream = 'snapshots' OR stream LIKE 'snapshots-%' THEN 'snapshots' END`;

export interface Overlap {
  account: string;
  group: string;
  runs: string;
}

/**
 * Pairs of runs of one account and group whose [started_at, finished_at] intersect; a run with no
 * finished_at (still 'running', or its process killed) is open-ended. Ends that touch within the same
 * millisecond are not counted: at the column's resolution their order cannot be told.
 */
export async function overlappingRuns(url: string): Promise<Overlap[]> {
  return adminQuery<Overlap>(
    url,
    `WITH r AS (SELECT id, account_name, stream, started_at, finished_at, outcome, ${GROUP} AS grp FROM sync_runs)
     SELECT a.account_name AS account, a.grp AS group,
            format('%s %s %s..%s (%s) / %s %s %s..%s (%s)', a.id, a.stream, a.started_at, a.finished_at, a.outcome,
                   b.id, b.stream, b.started_at, b.finished_at, b.outcome) AS runs
     FROM r a
     JOIN r b ON b.account_name = a.account_name AND b.grp = a.grp AND b.id > a.id
     WHERE a.grp IS NOT NULL
       AND a.started_at < coalesce(b.finished_at, 'infinity')
       AND b.started_at < coalesce(a.finished_at, 'infinity')
     ORDER BY a.id, b.id`,
  );
}

/** Accounts with at least one bills run that ended 'ok'. */
export async function accountsWithOkBillsRun(url: string): Promise<Set<string>> {
  const rows = await adminQuery<{ account_name: string }>(
    url,
    `SELECT DISTINCT account_name FROM sync_runs
     WHERE outcome = 'ok' AND (stream = 'bills' OR stream LIKE 'bills-%')`,
  );
  return new Set(rows.map((r) => r.account_name));
}

/**
 * Where the account's stored bills differ from the sandbox's truth (every column, in order), in a
 * sentence; undefined when they are equal.
 */
export async function billsDifference(url: string, account: string, truth: SandboxBill[]): Promise<string | undefined> {
  const stored = await adminQuery(
    url,
    `SELECT bill_id::text AS "billId", coin, symbol, business_type AS "businessType", amount::text AS amount,
            balance::text AS balance, fill_fee::text AS "fillFee", created_at_ms::text AS "cTimeMs"
     FROM bills
     WHERE account_name = $1
     ORDER BY created_at_ms, bill_id::numeric`,
    [account],
  );
  const expected = asRows(truth);
  const at = expected.findIndex((row, i) => JSON.stringify(row) !== JSON.stringify(stored[i]));
  if (at === -1 && stored.length === expected.length) return undefined;
  const where = at === -1 ? `${stored.length - expected.length} extra` : `first difference at #${at}`;
  return `${account}: ${stored.length} bills stored, the exchange has ${expected.length} (${where})`;
}

/** Rows of _prisma_migrations per migration name (applied or not). */
export async function migrationRows(url: string): Promise<Map<string, { rows: number; finished: number }>> {
  const rows = await adminQuery<{ name: string; rows: number; finished: number }>(
    url,
    `SELECT migration_name AS name, count(*)::int AS rows,
            count(*) FILTER (WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL)::int AS finished
     FROM _prisma_migrations
     GROUP BY migration_name`,
  );
  return new Map(rows.map((r) => [r.name, { rows: r.rows, finished: r.finished }]));
}

/** The schema `public` holds (tables, columns, indexes, constraints, triggers, functions), owners aside. */
export async function schemaFingerprint(url: string): Promise<string[]> {
  const rows = await adminQuery<{ item: string }>(
    url,
    `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable
              || ' ' || coalesce(column_default, '') AS item
     FROM information_schema.columns WHERE table_schema = 'public'
     UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
     UNION ALL SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
     FROM pg_constraint WHERE connamespace = 'public'::regnamespace
     UNION ALL SELECT 'trigger ' || tgrelid::regclass || ' ' || tgname || ' ' || tgenabled::text
     FROM pg_trigger WHERE NOT tgisinternal AND tgrelid::regclass::text NOT LIKE 'pg_%'
     UNION ALL SELECT 'function ' || p.oid::regprocedure::text
     FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
     ORDER BY 1`,
  );
  return rows.map((r) => r.item);
}
