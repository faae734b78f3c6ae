// The runtime role: what the worker and the sync commands connect as, so that the books' owner's
// credentials stay out of their environment. It reads and writes the schema's tables and cannot
// change what guards them: it does not own them (no DROP, ALTER, DISABLE TRIGGER) and holds no
// TRUNCATE, TRIGGER or REFERENCES privilege. Every table is covered by "all tables" grants and by
// default privileges for what later migrations create, so a new table needs no change here; only
// DELETE is listed, table by table. See docs/design/least-privilege.md.
import type { Db } from "./prisma.ts";
import { checkRoleName, grantAccess, prepareRole, tableExists } from "./role-grants.ts";

/**
 * The tables the runtime deletes from, and why; nothing else. Bills, revisions, runs, closes,
 * quarantine and cursors are never deleted at run time: removing an account's books (`accounts
 * remove --delete-books`) and an account's registration (`accounts remove`) are the owner's acts.
 */
export const RUNTIME_DELETE_TABLES = [
  // Snapshot retention (SNAPSHOT_HISTORY_RETENTION_DAYS, store/snapshot-retention.ts): settings
  // versions and history that ended before the cutoff.
  "fee_settings",
  "mode_settings",
  "leverage_settings",
  "collateral_history",
  "position_history",
  "account_snapshots",
  // The wallet check (store/wallet-checks.ts): a reading is removed once checked, and pending ones
  // beyond the newest few are dropped.
  "wallet_readings",
] as const;

/**
 * Tables the runtime reads and never writes: the migration history (migrate's), the BI rollups,
 * kept by triggers on bills that run as the owner (SECURITY DEFINER), so figures the BI views show
 * cannot be written past the bills, and the legal holds, which the worker only obeys: placing and
 * releasing one is the owner's act, like deleting books (its trigger refuses a release by any other
 * role, should a grant allow it), and the restore drills' records, which only an operator's `archive
 * drill` writes (the worker never runs one, so it cannot record a drill that never ran).
 */
export const RUNTIME_READ_ONLY_TABLES = [
  "_prisma_migrations",
  "daily_rollups",
  "rollup_rows",
  "legal_holds",
  "restore_drills",
  // Which months `storage compact` rebuilt: the owner's command writes it (REINDEX is the owner's).
  "compacted_months",
  // Each account's last bills runs for the fleet view: kept by triggers on sync_runs, as the owner.
  "bills_run_stats",
] as const;

export async function grantRuntime(db: Db, role: string, password?: string): Promise<void> {
  checkRoleName(role); // before connecting: a bad name is a usage error whatever the database
  await db.$transaction(async (tx) => {
    const t = await prepareRole(tx, "grant-runtime", role, password);
    const { q, schema, owner } = t;
    const run = (sql: string) => tx.$executeRawUnsafe(sql);
    await grantAccess(tx, t);
    // Tables and views: read and write rows, nothing more, whatever was granted before. REVOKE ALL
    // takes TRUNCATE, TRIGGER, REFERENCES and DELETE away; ownership (DROP, ALTER) is never given.
    await run(`REVOKE ALL ON ALL TABLES IN SCHEMA ${schema} FROM ${q}`);
    await run(`GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA ${schema} TO ${q}`);
    for (const table of RUNTIME_READ_ONLY_TABLES)
      if (await tableExists(tx, t, table)) await run(`REVOKE INSERT, UPDATE ON ${schema}."${table}" FROM ${q}`);
    for (const table of RUNTIME_DELETE_TABLES)
      if (await tableExists(tx, t, table)) await run(`GRANT DELETE ON ${schema}."${table}" TO ${q}`);
    // Sequences (bigserial ids, run lease tokens): nextval and currval, never setval.
    await run(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${schema} FROM ${q}`);
    await run(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${schema} TO ${q}`);
    await run(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schema} TO ${q}`);
    // The same for what migrate (the owner) creates later. A table added to RUNTIME_DELETE_TABLES
    // gets its DELETE when grant-runtime runs again after that migration.
    const defaults = `ALTER DEFAULT PRIVILEGES FOR ROLE ${owner} IN SCHEMA ${schema}`;
    await run(`${defaults} REVOKE ALL ON TABLES FROM ${q}`);
    await run(`${defaults} GRANT SELECT, INSERT, UPDATE ON TABLES TO ${q}`);
    await run(`${defaults} REVOKE ALL ON SEQUENCES FROM ${q}`);
    await run(`${defaults} GRANT USAGE, SELECT ON SEQUENCES TO ${q}`);
    await run(`${defaults} GRANT EXECUTE ON FUNCTIONS TO ${q}`);
  });
}
