// What verify reads of an account's bookkeeping besides its bills: the bills cursor, the archived
// months, the quarantine and the collateral's coins, in one statement (each part's SQL stays with
// its owner). The worker's verify after every sync reads them with its own state in the same
// statement (incremental.ts), so a quiet account's job pays one round trip for all of them.
import {
  archivedMonthsSql,
  toArchivedMonth,
  type ArchivedAccountMonth,
  type ArchivedMonthRow,
} from "../store/archived-months.ts";
import { sealsSql, toAccountSeals, type AccountSeals, type SealRow } from "../periods/seal-chain.ts";
import type { Db } from "../store/prisma.ts";
import { collateralCoinsSql } from "./collateral-checks.ts";
import {
  billsCursorSql,
  quarantineGroupsSql,
  toBillsCursor,
  type BillsCursor,
  type QuarantineGroup,
} from "./store-checks.ts";
import { trailGuardsSql, type TrailGuards } from "./trail-guards.ts";

export interface AccountFacts {
  /** The bills cursor, or undefined when the stream was never synced. */
  cursor: BillsCursor | undefined;
  /** The account's archived months, oldest first. */
  archived: ArchivedAccountMonth[];
  quarantine: QuarantineGroup[];
  /** The coin ids of the account's collateral history, in order. */
  collateralCoinIds: string[];
  /** The account's closes and their seals (the chain verify checks). */
  seals: AccountSeals;
  /** The audit trail's guard triggers (of the database, not the account: riding here costs no round trip). */
  trailGuards: TrailGuards;
}

export interface AccountFactsRow {
  cursor: { cursor_ms: string; updated_at: string } | null;
  archived: ArchivedMonthRow[];
  quarantine: QuarantineGroup[];
  collateral_coins: string[];
  trail_guards: TrailGuards;
  seals: SealRow[];
}

/** The facts as select-list columns, `account` being the SQL expression of the account's name. */
export function accountFactsColumns(account: string): string {
  return `(SELECT row_to_json(c) FROM (${billsCursorSql(account)}) c) AS cursor,
    (SELECT coalesce(json_agg(a ORDER BY a.month), '[]') FROM (${archivedMonthsSql(account, "NULL", "NULL")}) a)
      AS archived,
    (SELECT coalesce(json_agg(q), '[]') FROM (${quarantineGroupsSql(account)}) q) AS quarantine,
    (SELECT coalesce(json_agg(c.coin_id ORDER BY c.coin_id), '[]') FROM (${collateralCoinsSql(account)}) c)
      AS collateral_coins,
    (${trailGuardsSql}) AS trail_guards,
    (SELECT coalesce(json_agg(s), '[]') FROM (${sealsSql(account)}) s) AS seals`;
}

export function toAccountFacts(r: AccountFactsRow): AccountFacts {
  return {
    cursor: toBillsCursor(r.cursor),
    archived: r.archived.map(toArchivedMonth),
    quarantine: r.quarantine,
    collateralCoinIds: r.collateral_coins,
    trailGuards: r.trail_guards,
    seals: toAccountSeals(r.seals),
  };
}

export async function readAccountFacts(db: Db, account: string): Promise<AccountFacts> {
  const [row] = await db.$queryRawUnsafe<AccountFactsRow[]>(`SELECT ${accountFactsColumns("$1::text")}`, account);
  return toAccountFacts(row!);
}
