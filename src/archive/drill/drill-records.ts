// The drills' records in the books' database (restore_drills, migration restore_drills): one row per
// drill, pass or fail, written after it finishes; append-only (its guard refuses UPDATE, DELETE and
// TRUNCATE to every role) and read-only to the runtime role, so only an operator's drill writes one.
import type { Db } from "../../store/prisma.ts";
import { ArchiveRefused } from "../month.ts";
import type { DrillFailure, DrillOutcome } from "./drill-types.ts";

/** Refused, before any drill starts, when the books' database cannot take its record. */
export async function assertMayRecord(db: Db): Promise<void> {
  const [row] = await db.$queryRawUnsafe<{ role: string; exists: boolean; may: boolean | null }[]>(
    `SELECT current_user::text AS role, to_regclass('restore_drills') IS NOT NULL AS exists,
            CASE WHEN to_regclass('restore_drills') IS NOT NULL
                 THEN has_table_privilege('restore_drills', 'INSERT') END AS may`,
  );
  if (!row!.exists)
    throw new ArchiveRefused(
      "the books' database (DATABASE_URL) has no restore_drills table to record the drill in: " +
        "run `ledger-sync migrate`",
    );
  if (!row!.may)
    throw new ArchiveRefused(
      `the database role "${row!.role}" may not record a drill (no INSERT on restore_drills): run the drill with ` +
        "the owner's DATABASE_URL (the runtime role only reads the drills)",
    );
}

/** The drill's record; its id. */
export async function recordDrill(db: Db, o: DrillOutcome, runBy: string): Promise<string> {
  const [row] = await db.$queryRawUnsafe<{ id: string }[]>(
    `INSERT INTO restore_drills (month, archive_dir, manifest_sha256, anchors_dir, restore_target,
                                 target_server_version, started_at, finished_at, outcome, accounts, closes_checked,
                                 closes_proven, bills_loaded, failures, closes, run_by)
     VALUES ($1::date, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz, $9, $10, $11, $12, $13::bigint,
             $14::jsonb, $15::jsonb, $16)
     RETURNING id::text`,
    `${o.month}-01`,
    o.archiveDir,
    o.manifestSha256,
    o.anchorsDir,
    o.target,
    o.serverVersion,
    o.startedAt,
    o.finishedAt,
    o.outcome,
    o.accounts.length,
    o.closesChecked,
    o.closesProven,
    String(o.billsLoaded),
    JSON.stringify(o.failures),
    JSON.stringify(o.closes),
    runBy,
  );
  return row!.id;
}

export interface DrillRecord {
  id: string;
  month: string;
  archiveDir: string;
  manifestSha256: string;
  anchorsDir: string;
  target: string;
  serverVersion: string | null;
  startedAt: string;
  finishedAt: string;
  outcome: "pass" | "fail";
  accounts: number;
  closesChecked: number;
  closesProven: number;
  billsLoaded: number;
  failures: DrillFailure[];
  runBy: string;
  dbUser: string;
  recordedAt: string;
}

/** Every recorded drill, newest first. */
export async function listDrills(db: Db): Promise<DrillRecord[]> {
  const rows = await db.$queryRawUnsafe<
    {
      id: string;
      month: string;
      archive_dir: string;
      manifest_sha256: string;
      anchors_dir: string;
      restore_target: string;
      target_server_version: string | null;
      started_at: Date;
      finished_at: Date;
      outcome: "pass" | "fail";
      accounts: number;
      closes_checked: number;
      closes_proven: number;
      bills_loaded: string;
      failures: DrillFailure[];
      run_by: string;
      db_user: string;
      recorded_at: Date;
    }[]
  >(
    `SELECT id::text, to_char(month, 'YYYY-MM') AS month, archive_dir, manifest_sha256, anchors_dir, restore_target,
            target_server_version, started_at, finished_at, outcome, accounts, closes_checked, closes_proven,
            bills_loaded::text, failures, run_by, db_user, recorded_at
     FROM restore_drills ORDER BY started_at DESC, id DESC`,
  );
  return rows.map((r) => ({
    id: r.id,
    month: r.month,
    archiveDir: r.archive_dir,
    manifestSha256: r.manifest_sha256,
    anchorsDir: r.anchors_dir,
    target: r.restore_target,
    serverVersion: r.target_server_version,
    startedAt: r.started_at.toISOString(),
    finishedAt: r.finished_at.toISOString(),
    outcome: r.outcome,
    accounts: r.accounts,
    closesChecked: r.closes_checked,
    closesProven: r.closes_proven,
    billsLoaded: Number(r.bills_loaded),
    failures: r.failures,
    runBy: r.run_by,
    dbUser: r.db_user,
    recordedAt: r.recorded_at.toISOString(),
  }));
}
