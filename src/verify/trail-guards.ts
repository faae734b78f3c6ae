// verify's check of the audit trail's own guards: the triggers that make the books append-only are
// in place, enabled, fire as their migrations made them and run the functions the migrations made.
// An owner can switch a guard off, rewrite the books and leave no sign the other checks must see, so
// verify fails while any guard is off. It reads only the catalog, which every role may read, so the
// read-only role runs it too; it shows the guards are on now, not that they always were.
import type { Db } from "../store/prisma.ts";
import type { CheckResult } from "./report.ts";

export const TRAIL_GUARDS_CHECK = "audit-trail-guards";

// pg_trigger.tgtype's bits (PostgreSQL's catalog/pg_trigger.h): when and on what a trigger fires.
const ROW = 1;
const BEFORE = 2;
const INSERT = 4;
const DELETE = 8;
const UPDATE = 16;
const TRUNCATE = 32;
const INSTEAD = 64;

/**
 * SHA-256 of each guard function's body (pg_proc.prosrc, the text between `$$`, carriage returns
 * removed) as the last migration that defines it left it. A body replaced by hand (a guard that
 * lets everything through) fails the check; a migration that replaces one updates its line here
 * (the test of a clean migrated database fails until it does).
 */
export const GUARD_FUNCTIONS = {
  // Migration account_keys (20261127100000), the last of audit_trail, accounts and account_keys.
  ledger_sync_append_only: "e64676e584df0d85f98a26df096ea2fc1fcea178f9eae729931df94b4dae2c06",
  // Migration bills_view (20261127200100).
  ledger_sync_bill_rows_guard: "847a1b1f7fa27afd391ece936f1a4d038e9294602b4400d5bf015b2d85a79a2a",
  // Migration legal_holds (20261129000100).
  ledger_sync_legal_holds_guard: "b4bb92bd3eb2aededaf53c6c0ad0d13b8ef9ce93e22caf06380023efa3370c8d",
  // Migration period_closes (20261124210703).
  ledger_sync_period_close_chain: "79714b74dd5649e24eec8c868e774bcb793c9d3f5230e2ba85efc7b13a25dc73",
  // Migration restore_drills (20261130000000).
  ledger_sync_restore_drills_guard: "df627f9748ae7b8aeba264f7c15028b45d5e861c438b0bbcace295afffb5e3a3",
} as const;

export interface GuardTrigger {
  name: string;
  /** pg_trigger.tgtype as the migration made it. */
  tgtype: number;
  fn: keyof typeof GUARD_FUNCTIONS;
}

const noTruncate = (table: string): GuardTrigger => ({
  name: `${table}_no_truncate`,
  tgtype: BEFORE | TRUNCATE,
  fn: "ledger_sync_append_only",
});
/** An append-only table's pair: no UPDATE or DELETE of a row, no TRUNCATE. */
const appendOnly = (table: string): GuardTrigger[] => [
  { name: `${table}_append_only`, tgtype: ROW | BEFORE | UPDATE | DELETE, fn: "ledger_sync_append_only" },
  noTruncate(table),
];

/**
 * The books' guard triggers, per table, as prisma/migrations/ made them: the one list of them (a
 * test fails when a migration adds a trigger named *_guard, *_append_only, *_no_truncate or
 * *_no_delete that is not here). A row trigger of a partitioned table is checked on every partition
 * too. Not guards, so not here: the bills view's INSTEAD OF trigger bills_view_write (the write
 * path: off, it refuses writes rather than letting them through), the rollups' and keys' triggers
 * (derived figures, not the trail), and bills_legacy_read_only (the old table kept after the
 * upgrade until `storage drop-legacy`; nothing reads it).
 */
export const TRAIL_GUARDS: Readonly<Record<string, readonly GuardTrigger[]>> = {
  // Migration bills_view (20261127200100): bills never deleted, changed only through the revision path.
  bill_rows: [
    { name: "bill_rows_guard", tgtype: ROW | BEFORE | UPDATE | DELETE, fn: "ledger_sync_bill_rows_guard" },
    noTruncate("bill_rows"),
  ],
  // Migration audit_trail (20261121141705).
  bill_revisions: appendOnly("bill_revisions"),
  // Migration audit_trail (20261121141705): a run is completed by an UPDATE, never removed.
  sync_runs: [
    { name: "sync_runs_no_delete", tgtype: ROW | BEFORE | DELETE, fn: "ledger_sync_append_only" },
    noTruncate("sync_runs"),
  ],
  // Migration period_closes (20261124210703): a close supersedes only a close of its account and period.
  period_closes: [
    ...appendOnly("period_closes"),
    { name: "period_closes_chain", tgtype: ROW | BEFORE | INSERT, fn: "ledger_sync_period_close_chain" },
  ],
  // Migration period_closes (20261124210703).
  period_close_bills: appendOnly("period_close_bills"),
  // Migration close_seals (20261129000000).
  close_seals: appendOnly("close_seals"),
  // Migration legal_holds (20261129000100): a hold is never removed, and released once, by the owner.
  legal_holds: [
    {
      name: "legal_holds_guard",
      tgtype: ROW | BEFORE | INSERT | UPDATE | DELETE,
      fn: "ledger_sync_legal_holds_guard",
    },
    { name: "legal_holds_no_truncate", tgtype: BEFORE | TRUNCATE, fn: "ledger_sync_legal_holds_guard" },
  ],
  // Migration restore_drills (20261130000000): a drill's record is written once, never changed or removed.
  restore_drills: [
    {
      name: "restore_drills_append_only",
      tgtype: ROW | BEFORE | UPDATE | DELETE,
      fn: "ledger_sync_restore_drills_guard",
    },
    { name: "restore_drills_no_truncate", tgtype: BEFORE | TRUNCATE, fn: "ledger_sync_restore_drills_guard" },
  ],
};

/** A guard trigger that is not as its migration made it, where it must fire (its table or a partition). */
export interface TrailGuardProblem {
  /** The table, or the partition, as regclass prints it. */
  subject: string;
  /** The table the trigger was made on (for a partition: the partitioned table). */
  table: string;
  trigger: string;
  /** On a partition: the clone of the partitioned table's trigger. */
  clone: boolean;
  tableFound: boolean;
  found: boolean;
  /** pg_trigger.tgenabled: O (origin), A (always), R (replica only), D (disabled); null when missing. */
  enabled: string | null;
  /** The function the trigger runs (schema-qualified when not in the table's schema), and the one expected. */
  fn: string | null;
  expectedFn: string;
  /** Its body is the one the migrations made. */
  bodyOk: boolean;
  tgtype: number | null;
  expectedTgtype: number;
  /** Fires only WHEN a condition holds, or only on UPDATE OF some columns. */
  when: boolean;
  columns: boolean;
}

export interface TrailGuards {
  /** Guard triggers checked on their tables, those tables, and the partitions their clones were checked on. */
  triggers: number;
  tables: number;
  partitions: number;
  problems: TrailGuardProblem[];
}

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

const EXPECTED = Object.entries(TRAIL_GUARDS)
  .flatMap(([table, guards]) =>
    guards.map(
      (g) =>
        `(${literal(table)}, ${literal(g.name)}, ${g.tgtype}, ${literal(g.fn)}, ${literal(GUARD_FUNCTIONS[g.fn])})`,
    ),
  )
  .join(",\n    ");

/**
 * One query for every table, giving a TrailGuards as JSON: a scalar subquery, so that it can ride
 * on another read. tgenabled 'O' (fires under session_replication_role origin, the normal one) and
 * 'A' (always) count as enabled; 'D' never fires and 'R' only under replica, so in a normal session
 * both are switched off.
 */
export const trailGuardsSql = `WITH expected (tbl, tgname, tgtype, fn, body) AS (
    VALUES ${EXPECTED}
  ),
  on_table AS (
    SELECT e.*, c.oid AS relid, c.relnamespace AS nsp, t.oid AS tgoid
    FROM expected e
    LEFT JOIN pg_class c ON c.oid = to_regclass(quote_ident(e.tbl))
    LEFT JOIN pg_trigger t ON t.tgrelid = c.oid AND t.tgname = e.tgname AND t.tgparentid = 0
  ),
  -- A row trigger of a partitioned table is cloned onto each partition (tgparentid names the one it
  -- was cloned from), and each clone can be switched off on its own. A statement trigger is not
  -- cloned, and does not fire for a statement naming a partition (TRUNCATE of one partition): each
  -- partition has its own of the same name (migration partition_truncate_guard).
  placed AS (
    SELECT o.tbl AS subject, o.tbl, o.tgname, o.tgtype, o.fn, o.body, o.relid, o.nsp, o.tgoid, false AS clone
    FROM on_table o
    UNION ALL
    SELECT p.relid::regclass::text, o.tbl, o.tgname, o.tgtype, o.fn, o.body, p.relid, o.nsp, t.oid, true
    FROM on_table o
    CROSS JOIN LATERAL pg_partition_tree(o.relid) p
    LEFT JOIN pg_trigger t ON t.tgrelid = p.relid
      AND CASE WHEN o.tgtype & ${ROW} <> 0 THEN t.tgparentid = o.tgoid
               ELSE t.tgparentid = 0 AND t.tgname = o.tgname END
    WHERE o.tgoid IS NOT NULL AND p.level > 0
  ),
  seen AS (
    SELECT s.subject, s.tbl, s.tgname, s.clone, s.relid IS NOT NULL AS table_found, t.oid IS NOT NULL AS found,
      t.tgenabled::text AS enabled,
      CASE WHEN f.pronamespace = s.nsp THEN f.proname::text ELSE f.pronamespace::regnamespace || '.' || f.proname END
        AS fn,
      s.fn AS expected_fn,
      coalesce(encode(sha256(convert_to(replace(f.prosrc, E'\\r', ''), 'UTF8')), 'hex') = s.body, false) AS body_ok,
      t.tgtype::int AS actual_tgtype, s.tgtype AS expected_tgtype, t.tgqual IS NOT NULL AS has_when,
      coalesce(cardinality(t.tgattr::int2[]) > 0, false) AS has_columns
    FROM placed s
    LEFT JOIN pg_trigger t ON t.oid = s.tgoid
    LEFT JOIN pg_proc f ON f.oid = t.tgfoid
  )
  SELECT json_build_object(
    'triggers', count(*) FILTER (WHERE NOT clone),
    'tables', count(DISTINCT subject) FILTER (WHERE NOT clone),
    'partitions', count(DISTINCT subject) FILTER (WHERE clone),
    'problems', coalesce(json_agg(json_build_object(
        'subject', subject, 'table', tbl, 'trigger', tgname, 'clone', clone, 'tableFound', table_found, 'found', found,
        'enabled', enabled, 'fn', fn, 'expectedFn', expected_fn, 'bodyOk', body_ok, 'tgtype', actual_tgtype,
        'expectedTgtype', expected_tgtype, 'when', has_when, 'columns', has_columns
      ) ORDER BY clone, subject, tgname)
      FILTER (WHERE NOT (found AND enabled IN ('O', 'A') AND fn = expected_fn AND body_ok
        AND actual_tgtype = expected_tgtype AND NOT has_when AND NOT has_columns)), '[]')
  )
  FROM seen`;

export async function readTrailGuards(db: Db): Promise<TrailGuards> {
  const [row] = await db.$queryRawUnsafe<{ g: TrailGuards }[]>(`SELECT (${trailGuardsSql}) AS g`);
  return row!.g;
}

/** "BEFORE UPDATE OR DELETE FOR EACH ROW": how a tgtype fires, in CREATE TRIGGER's words. */
function firing(tgtype: number): string {
  const events = (
    [
      [INSERT, "INSERT"],
      [UPDATE, "UPDATE"],
      [DELETE, "DELETE"],
      [TRUNCATE, "TRUNCATE"],
    ] as const
  )
    .filter(([bit]) => tgtype & bit)
    .map(([, word]) => word);
  const timing = tgtype & BEFORE ? "BEFORE" : tgtype & INSTEAD ? "INSTEAD OF" : "AFTER";
  return `${timing} ${events.join(" OR ")} FOR EACH ${tgtype & ROW ? "ROW" : "STATEMENT"}`;
}

/** What is wrong with one guard where it must fire, in a few words (without its name). */
function wrongWith(p: TrailGuardProblem): string {
  if (!p.tableFound) return `has no table: ${p.subject} is missing`;
  if (!p.found) return "is missing";
  const wrong: string[] = [];
  if (p.enabled === "D") wrong.push("is disabled");
  else if (p.enabled === "R") wrong.push("fires only under session_replication_role replica (ENABLE REPLICA TRIGGER)");
  else if (p.enabled !== "O" && p.enabled !== "A") wrong.push(`is in state ${p.enabled}`);
  if (p.fn !== p.expectedFn) wrong.push(`runs ${p.fn}, not ${p.expectedFn}`);
  else if (!p.bodyOk) wrong.push(`runs a ${p.fn} whose body is not the one the migrations made`);
  if (p.tgtype !== p.expectedTgtype) wrong.push(`fires ${firing(p.tgtype ?? 0)}, not ${firing(p.expectedTgtype)}`);
  if (p.when) wrong.push("fires only WHEN a condition holds");
  if (p.columns) wrong.push("fires only on UPDATE OF some columns");
  return wrong.join(", ");
}

/**
 * The check: one failing result per table or partition whose guards are not as made, naming each
 * trigger and what is wrong; else one pass for the database. A trigger switched off on a partitioned
 * table is switched off on its partitions alike (ALTER TABLE recurses to them): those clones are
 * named on the table's line rather than one line each, and a partition is a line of its own only
 * where it differs from its table.
 */
export function checkTrailGuards(g: TrailGuards): CheckResult[] {
  if (g.problems.length === 0)
    return [
      {
        check: TRAIL_GUARDS_CHECK,
        subject: "database",
        status: "pass",
        summary:
          `${g.triggers} guard triggers on ${g.tables} tables, and their clones on ${g.partitions} partition(s), ` +
          "are enabled and run the functions the migrations made",
        details: { triggers: g.triggers, tables: g.tables, partitions: g.partitions },
      },
    ];
  const key = (p: TrailGuardProblem) => `${p.table}.${p.trigger}`;
  const onTable = new Map(g.problems.filter((p) => !p.clone).map((p) => [key(p), wrongWith(p)]));
  const alike = new Map<string, string[]>();
  const bySubject = new Map<string, TrailGuardProblem[]>();
  for (const p of g.problems) {
    if (p.clone && onTable.get(key(p)) === wrongWith(p)) alike.set(key(p), [...(alike.get(key(p)) ?? []), p.subject]);
    else bySubject.set(p.subject, [...(bySubject.get(p.subject) ?? []), p]);
  }
  return [...bySubject].map(([subject, problems]) => {
    const clone = problems[0]!.clone;
    const lines = problems.map((p) => {
      const partitions = alike.get(key(p)) ?? [];
      const where = p.clone
        ? p.expectedTgtype & ROW
          ? ` (cloned from ${p.table})`
          : ` (${p.table}'s own on each partition)`
        : partitions.length > 0
          ? `, here and on its clones on ${partitions.length} partition(s) ` +
            `(${partitions.slice(0, 3).join(", ")}${partitions.length > 3 ? ", ..." : ""})`
          : "";
      return p.clone ? `${p.trigger}${where} ${wrongWith(p)}` : `${p.trigger} ${wrongWith(p)}${where}`;
    });
    return {
      check: TRAIL_GUARDS_CHECK,
      subject,
      status: "fail" as const,
      summary:
        `${lines.join("; ")}: ` +
        `the database does not enforce the audit trail on this ${clone ? "partition" : "table"}`,
      details: {
        triggers: problems.map((p) => (p.clone ? p : { ...p, partitions: alike.get(key(p)) ?? [] })),
      },
    };
  });
}
