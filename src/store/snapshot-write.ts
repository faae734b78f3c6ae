// Stores one snapshot (one fetch of one coin id) in ONE transaction: the account record, the three
// settings tables, collateral and positions land together or not at all. History rows are written
// only when content changed (content_hash); every fetch still updates last_seen_at. A record the
// response did not carry (the public form may carry no account record and no positions) is null:
// its tables are left as they are, so no change and no closing is recorded for it.
import type { Prisma } from "./generated/client.ts";
import type { Db } from "./prisma.ts";
import { fenceSql, type RunFence } from "./run-lease.ts";
import { insertColumns, recordset, selectValues, updateFromExcluded } from "./snapshot-sql.ts";
import {
  ACCOUNT_COLUMNS,
  COLLATERAL_COLUMNS,
  COLLATERAL_KEY,
  FEE_COLUMNS,
  LEVERAGE_COLUMNS,
  MODE_COLUMNS,
  POSITION_COLUMNS,
  type Columns,
  type SnapshotRow,
} from "./snapshot-tables.ts";

type Tx = Prisma.TransactionClient;

export interface SnapshotWrite {
  accountName: string;
  coinId: string;
  version: string;
  takenAt: Date;
  /** null: the response carried no account record (account and settings left as they are). */
  account: SnapshotRow | null;
  /** Settings rows carry contract_id besides their content columns. */
  fees: SnapshotRow[];
  modes: SnapshotRow[];
  leverages: SnapshotRow[];
  collateral: SnapshotRow[];
  /** null: the response carried no positions (none is opened, changed or closed). */
  positions: SnapshotRow[] | null;
  /**
   * The run's lease of the account's snapshots (run-lease.ts): the transaction fails, writing
   * nothing, unless it is still the lease's. Every run of the worker and the commands passes it.
   */
  fence?: RunFence;
}

export interface SnapshotChanges {
  accountChanged: boolean;
  settingsChanged: { fees: number; modes: number; leverages: number };
  collateralChanged: number;
  positions: { opened: number; changed: number; reopened: number; closed: number };
}

const json = (rows: SnapshotRow[]) => JSON.stringify(rows);

export function commitSnapshot(db: Db, s: SnapshotWrite): Promise<SnapshotChanges> {
  if (s.fence && (s.fence.account !== s.accountName || s.fence.group !== "snapshots"))
    throw new Error(
      `a snapshot of account "${s.accountName}" carries the lease of ${s.fence.group} "${s.fence.account}"`,
    );
  const fence = s.fence;
  return db.$transaction(async (tx) => {
    // First: the lease row is held FOR SHARE until commit, so no taking can pass this write.
    if (fence)
      await tx.$queryRawUnsafe(`SELECT ${fenceSql("$1", "$2", "$3")} AS ok`, fence.account, fence.group, fence.token);
    await writeBookmark(tx, s);
    return {
      accountChanged: s.account === null ? false : await writeAccount(tx, s, s.account),
      settingsChanged: {
        fees: await writeSettings(tx, "fee_settings", FEE_COLUMNS, s.accountName, s.fees, s.takenAt),
        modes: await writeSettings(tx, "mode_settings", MODE_COLUMNS, s.accountName, s.modes, s.takenAt),
        leverages: await writeSettings(
          tx,
          "leverage_settings",
          LEVERAGE_COLUMNS,
          s.accountName,
          s.leverages,
          s.takenAt,
        ),
      },
      collateralChanged: await writeCollateral(tx, s),
      positions:
        s.positions === null
          ? { opened: 0, changed: 0, reopened: 0, closed: 0 }
          : await writePositions(tx, s, s.positions),
    };
  });
}

/**
 * sync_state row "snapshots:<coinId>": when this coin was last snapshotted, in the same
 * transaction, so health checks and `status` read snapshots' progress like the bills cursor.
 */
async function writeBookmark(tx: Tx, s: SnapshotWrite): Promise<void> {
  await tx.$executeRawUnsafe(
    `INSERT INTO sync_state AS st (account_name, stream, cursor_ms, updated_at)
     VALUES ($1, $2, $3::bigint, $4)
     ON CONFLICT (account_name, stream) DO UPDATE
       SET cursor_ms = GREATEST(st.cursor_ms, excluded.cursor_ms), updated_at = excluded.updated_at`,
    s.accountName,
    `snapshots:${s.coinId}`,
    String(s.takenAt.getTime()),
    s.takenAt,
  );
}

async function count(tx: Tx, sql: string, ...params: unknown[]): Promise<number> {
  const rows = await tx.$queryRawUnsafe<{ n: number }[]>(sql, ...params);
  return rows[0]?.n ?? 0;
}

/** A new account_snapshots row when the record differs from the latest one; else touch it. */
async function writeAccount(tx: Tx, s: SnapshotWrite, account: SnapshotRow): Promise<boolean> {
  const latest = await tx.$queryRawUnsafe<{ id: bigint; content_hash: string }[]>(
    `SELECT id, content_hash FROM account_snapshots
     WHERE account_name = $1 AND coin_id = $2
     ORDER BY taken_at DESC, id DESC
     LIMIT 1
     FOR UPDATE`,
    s.accountName,
    s.coinId,
  );
  const current = latest[0];
  if (current && current.content_hash === account.content_hash) {
    await tx.$executeRawUnsafe(
      "UPDATE account_snapshots SET last_seen_at = $2 WHERE account_name = $3 AND id = $1",
      current.id,
      s.takenAt,
      s.accountName,
    );
    return false;
  }
  await tx.$executeRawUnsafe(
    `INSERT INTO account_snapshots
       (account_name, coin_id, version, taken_at, last_seen_at, ${insertColumns(ACCOUNT_COLUMNS).join(", ")})
     SELECT $1, $3, $4, $5, $5, ${selectValues(ACCOUNT_COLUMNS).join(", ")}
     FROM ${recordset(ACCOUNT_COLUMNS, "$2")}`,
    s.accountName,
    json([account]),
    s.coinId,
    s.version,
    s.takenAt,
  );
  return true;
}

/**
 * Settings keep every version in one table (valid_from / valid_to; current: valid_to NULL). Three
 * statements in order: close versions whose content changed, touch unchanged ones, insert new
 * versions. (Data-modifying CTEs run in no defined order, which the one-current-version unique
 * index would not survive.) A contract absent from a response is left as it is: the spec does not
 * say the maps are complete. Returns the number of new versions.
 */
async function writeSettings(
  tx: Tx,
  table: string,
  columns: Columns,
  accountName: string,
  rows: SnapshotRow[],
  takenAt: Date,
): Promise<number> {
  if (rows.length === 0) return 0;
  const input = `${recordset([["contract_id", "text"], ...columns], "$2", false)}`;
  await tx.$executeRawUnsafe(
    `UPDATE ${table} s SET valid_to = $3 FROM ${input}
     WHERE s.account_name = $1 AND s.contract_id = i.contract_id AND s.valid_to IS NULL
       AND s.content_hash <> i.content_hash`,
    accountName,
    json(rows),
    takenAt,
  );
  await tx.$executeRawUnsafe(
    `UPDATE ${table} s SET last_seen_at = $3 FROM ${input}
     WHERE s.account_name = $1 AND s.contract_id = i.contract_id AND s.valid_to IS NULL`,
    accountName,
    json(rows),
    takenAt,
  );
  const cols = [["contract_id", "text"] as const, ...columns];
  return count(
    tx,
    `WITH ins AS (
       INSERT INTO ${table} (account_name, ${insertColumns(cols, false).join(", ")}, valid_from, valid_to, last_seen_at)
       SELECT $1, ${selectValues(cols, false).join(", ")}, $3, NULL, $3 FROM ${input}
       WHERE NOT EXISTS (
         SELECT 1 FROM ${table} s
         WHERE s.account_name = $1 AND s.contract_id = i.contract_id AND s.valid_to IS NULL
       )
       RETURNING 1)
     SELECT count(*)::int AS n FROM ins`,
    accountName,
    json(rows),
    takenAt,
  );
}

async function writeCollateral(tx: Tx, s: SnapshotWrite): Promise<number> {
  if (s.collateral.length === 0) return 0;
  const keyMatch = COLLATERAL_KEY.map((k) => `c.${k} = i.${k}`).join(" AND ");
  const changed = await count(
    tx,
    `WITH ins AS (
       INSERT INTO collateral_history (account_name, ${insertColumns(COLLATERAL_COLUMNS).join(", ")}, observed_at)
       SELECT $1, ${selectValues(COLLATERAL_COLUMNS).join(", ")}, $3
       FROM ${recordset(COLLATERAL_COLUMNS, "$2")}
       LEFT JOIN collateral_current c ON c.account_name = $1 AND ${keyMatch}
       WHERE c.content_hash IS DISTINCT FROM i.content_hash
       RETURNING 1)
     SELECT count(*)::int AS n FROM ins`,
    s.accountName,
    json(s.collateral),
    s.takenAt,
  );
  await tx.$executeRawUnsafe(
    `INSERT INTO collateral_current AS c
       (account_name, ${insertColumns(COLLATERAL_COLUMNS).join(", ")}, first_seen_at, changed_at, last_seen_at)
     SELECT $1, ${selectValues(COLLATERAL_COLUMNS).join(", ")}, $3, $3, $3
     FROM ${recordset(COLLATERAL_COLUMNS, "$2")}
     ON CONFLICT (account_name, ${COLLATERAL_KEY.join(", ")}) DO UPDATE SET ${updateFromExcluded(COLLATERAL_COLUMNS)},
       raw = excluded.raw,
       changed_at = CASE WHEN c.content_hash IS DISTINCT FROM excluded.content_hash
         THEN excluded.changed_at ELSE c.changed_at END,
       last_seen_at = excluded.last_seen_at`,
    s.accountName,
    json(s.collateral),
    s.takenAt,
  );
  return changed;
}

/**
 * Positions: history rows for opened / changed / reopened ones, upsert of the current rows, and
 * positions of this coin that the response no longer lists are closed (closed_at set, a 'closed'
 * history row repeating their last content). Nothing is deleted.
 */
async function writePositions(
  tx: Tx,
  s: SnapshotWrite,
  positions: SnapshotRow[],
): Promise<SnapshotChanges["positions"]> {
  const events = await tx.$queryRawUnsafe<{ event: string; n: number }[]>(
    `WITH ins AS (
       INSERT INTO position_history (account_name, event, ${insertColumns(POSITION_COLUMNS).join(", ")}, observed_at)
       SELECT $1,
              CASE WHEN c.position_id IS NULL THEN 'opened'
                   WHEN c.closed_at IS NOT NULL THEN 'reopened'
                   ELSE 'changed' END,
              ${selectValues(POSITION_COLUMNS).join(", ")}, $3
       FROM ${recordset(POSITION_COLUMNS, "$2")}
       LEFT JOIN positions_current c ON c.account_name = $1 AND c.position_id = i.position_id
       WHERE c.position_id IS NULL OR c.closed_at IS NOT NULL OR c.content_hash <> i.content_hash
       RETURNING event)
     SELECT event, count(*)::int AS n FROM ins GROUP BY event`,
    s.accountName,
    json(positions),
    s.takenAt,
  );
  if (positions.length > 0) {
    await tx.$executeRawUnsafe(
      `INSERT INTO positions_current AS c
         (account_name, ${insertColumns(POSITION_COLUMNS).join(", ")},
          first_seen_at, changed_at, last_seen_at, closed_at)
       SELECT $1, ${selectValues(POSITION_COLUMNS).join(", ")}, $3, $3, $3, NULL
       FROM ${recordset(POSITION_COLUMNS, "$2")}
       ON CONFLICT (account_name, position_id) DO UPDATE SET ${updateFromExcluded(POSITION_COLUMNS)},
         raw = excluded.raw,
         changed_at = CASE WHEN c.content_hash IS DISTINCT FROM excluded.content_hash OR c.closed_at IS NOT NULL
           THEN excluded.changed_at ELSE c.changed_at END,
         last_seen_at = excluded.last_seen_at,
         closed_at = NULL`,
      s.accountName,
      json(positions),
      s.takenAt,
    );
  }
  const closed = await count(
    tx,
    `WITH closed AS (
       UPDATE positions_current SET closed_at = $3
       WHERE account_name = $1 AND coin_id = $2 AND closed_at IS NULL AND NOT (position_id = ANY($4::text[]))
       RETURNING *),
     ins AS (
       INSERT INTO position_history (account_name, event, ${insertColumns(POSITION_COLUMNS).join(", ")}, observed_at)
       SELECT account_name, 'closed', ${insertColumns(POSITION_COLUMNS).join(", ")}, $3 FROM closed
       RETURNING 1)
     SELECT count(*)::int AS n FROM ins`,
    s.accountName,
    s.coinId,
    s.takenAt,
    positions.map((p) => String(p.position_id)),
  );
  const n = (e: string) => events.find((r) => r.event === e)?.n ?? 0;
  return { opened: n("opened"), changed: n("changed"), reopened: n("reopened"), closed };
}
