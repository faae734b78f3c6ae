// Deleting an account's books (`accounts remove NAME --delete-books --confirm NAME`): every row of
// every table that names the account, its closes' sealed bill lists, its schedule and its
// registration, in one transaction. The audit trail's guards let these rows go only because the
// transaction names the account in ledger_sync.purge_account (the accounts migration says how);
// daily_rollups follows the deleted bills through its own triggers. Refused while the account has
// a legal hold not released (legal-holds.ts); the holds themselves are kept, the record of why the
// books were kept and when that ended.
import { refuseUnderHold } from "../legal-holds.ts";
import type { Db } from "../prisma.ts";

export interface PurgeResult {
  /** Rows deleted per table. */
  deleted: Record<string, number>;
}

export async function purgeAccountBooks(db: Db, account: string): Promise<PurgeResult> {
  return db.$transaction(
    async (tx) => {
      // Under the account's hold lock to the commit: a hold placed meanwhile waits for this purge.
      await refuseUnderHold(tx, account, `delete the books of "${account}"`);
      await tx.$queryRawUnsafe("SELECT set_config('ledger_sync.purge_account', $1, true)", account);
      const deleted: Record<string, number> = {};
      deleted.period_close_bills = await tx.$executeRawUnsafe(
        "DELETE FROM period_close_bills WHERE account_name = $1",
        account,
      );
      // Bills before the rest: their triggers bring daily_rollups down to nothing for the account.
      deleted.bills = await tx.$executeRawUnsafe(
        "DELETE FROM bill_rows WHERE account_id = (SELECT id FROM account_keys WHERE name = $1)",
        account,
      );
      // Every other table keyed by account, found in the catalog so that a table added later is not
      // missed: by name, or else by the account's key (bill_rows' own id ranges and coins; a snapshot
      // table's account_id is the exchange's, and it has the name too). Not a month's
      // partition (bill_rows' delete reached them), nor bills_legacy, the upgrade's read-only copy of
      // the bills from before bill_rows, which goes whole with `storage drop-legacy`; the account's
      // key in account_keys stays (never reused: an archive's rows name it), and so do its legal holds.
      const tables = await tx.$queryRawUnsafe<{ t: string; by: string }[]>(
        `SELECT DISTINCT ON (c.relname) c.relname::text AS t, a.attname::text AS by FROM pg_class c
         JOIN pg_attribute a
           ON a.attrelid = c.oid AND a.attname IN ('account_name', 'account_id') AND NOT a.attisdropped
         WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
           AND c.relname NOT IN ('bill_rows', 'bills_legacy', 'period_close_bills', 'accounts', 'account_keys',
                                 'legal_holds')
         ORDER BY c.relname, a.attname = 'account_id'`,
      );
      // Deleted in name order, period_closes last (its sealed children went first).
      tables.sort((a, b) => Number(a.t === "period_closes") - Number(b.t === "period_closes"));
      for (const { t, by } of tables) {
        const table = `"${t.replaceAll('"', '""')}"`;
        deleted[t] = await tx.$executeRawUnsafe(
          by === "account_id"
            ? `DELETE FROM ${table} WHERE account_id = (SELECT id FROM account_keys WHERE name = $1)`
            : `DELETE FROM ${table} WHERE account_name = $1`,
          account,
        );
      }
      deleted.accounts = await tx.$executeRawUnsafe("DELETE FROM accounts WHERE name = $1", account);
      return { deleted };
    },
    { timeout: 3_600_000 },
  );
}
