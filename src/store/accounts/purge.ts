// Deleting an account's books (`accounts remove NAME --delete-books --confirm NAME`): every row of
// every table that names the account, its closes' sealed bill lists, its schedule and its
// registration, in one transaction. The audit trail's guards let these rows go only because the
// transaction names the account in ledger_sync.purge_account (the accounts migration says how);
// daily_rollups follows the deleted bills through its own triggers.
import type { Db } from "../prisma.ts";

export interface PurgeResult {
  /** Rows deleted per table. */
  deleted: Record<string, number>;
}

export async function purgeAccountBooks(db: Db, account: string): Promise<PurgeResult> {
  return db.$transaction(
    async (tx) => {
      await tx.$queryRawUnsafe("SELECT set_config('ledger_sync.purge_account', $1, true)", account);
      const deleted: Record<string, number> = {};
      deleted.period_close_bills = await tx.$executeRawUnsafe(
        "DELETE FROM period_close_bills WHERE account_name = $1",
        account,
      );
      // Bills before the rest: their triggers bring daily_rollups down to nothing for the account.
      deleted.bills = await tx.$executeRawUnsafe("DELETE FROM bills WHERE account_name = $1", account);
      // Every other table keyed by account, found in the catalog so that a table added later is not missed.
      const tables = await tx.$queryRawUnsafe<{ t: string }[]>(
        `SELECT c.table_name AS t FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
         WHERE c.table_schema = current_schema() AND c.column_name = 'account_name' AND t.table_type = 'BASE TABLE'
           AND c.table_name NOT IN ('bills', 'period_close_bills')
         ORDER BY (c.table_name = 'period_closes'), c.table_name`,
      );
      for (const { t } of tables)
        deleted[t] = await tx.$executeRawUnsafe(
          `DELETE FROM "${t.replaceAll('"', '""')}" WHERE account_name = $1`,
          account,
        );
      deleted.accounts = await tx.$executeRawUnsafe("DELETE FROM accounts WHERE name = $1", account);
      return { deleted };
    },
    { timeout: 3_600_000 },
  );
}
