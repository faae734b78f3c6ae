// The account a statement or a close is about (store/bills-accounts.ts), its refusals as this
// command's UsageError.
import { ACCOUNTS_WITH_BILLS_SQL, AccountChoiceError, chooseAccount } from "../store/bills-accounts.ts";
import type { Db } from "../store/prisma.ts";
import { UsageError } from "./period.ts";

export async function resolveAccount(db: Db, given: string | undefined): Promise<string> {
  const accounts = (await db.$queryRawUnsafe<{ a: string }[]>(ACCOUNTS_WITH_BILLS_SQL)).map((r) => r.a);
  try {
    return chooseAccount(accounts, given);
  } catch (err) {
    throw err instanceof AccountChoiceError && err.usage ? new UsageError(err.message) : err;
  }
}
