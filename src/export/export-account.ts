// The account an export reads: the one named, or the only one with bills.
import type pg from "pg";
import { ACCOUNTS_WITH_BILLS_SQL, AccountChoiceError, chooseAccount } from "../store/bills-accounts.ts";
import { hasBills } from "../store/bills-read.ts";
import { ExportRequestError } from "./export-errors.ts";

/**
 * A named account with bills is found by its index; only otherwise are the accounts listed (which
 * reads every account's rollups), to choose or to say which there are.
 */
export async function resolveAccount(client: pg.ClientBase, named: string | undefined): Promise<string> {
  if (named !== undefined && (await hasBills(client, named))) return named;
  const accounts = (await client.query<{ a: string }>(ACCOUNTS_WITH_BILLS_SQL)).rows.map((row) => row.a);
  try {
    return chooseAccount(accounts, named);
  } catch (err) {
    // "No bills yet" is not the request's fault: it stays an AccountChoiceError, a plain failure.
    throw err instanceof AccountChoiceError && err.usage ? new ExportRequestError(err.message) : err;
  }
}
