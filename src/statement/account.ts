// Which account a statement or a close is about: the one named, or the only one with bills. A name
// with no bills is refused rather than answered with empty books: a typo must not look like a
// quiet month.
import type { Db } from "../store/prisma.ts";
import { UsageError } from "./period.ts";

export async function resolveAccount(db: Db, given: string | undefined): Promise<string> {
  const accounts = (
    await db.$queryRawUnsafe<{ a: string }[]>("SELECT DISTINCT account_name AS a FROM bills ORDER BY 1")
  ).map((r) => r.a);
  const known = accounts.join(", ") || "none";
  if (given !== undefined) {
    if (!accounts.includes(given))
      throw new UsageError(`--account ${given}: no bills are stored for that account (accounts with bills: ${known})`);
    return given;
  }
  if (accounts.length === 1) return accounts[0]!;
  if (accounts.length === 0) throw new Error("no bills are stored yet: sync first");
  throw new UsageError(`several accounts have bills (${known}): give --account`);
}
