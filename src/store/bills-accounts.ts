// Which account a command over the stored bills is about (export, statement, close): the one
// named, or the only one with bills. A name with no bills is refused rather than answered with
// empty books: a typo must not look like a quiet month.

/**
 * The accounts with bills: each account key that has a rollup row (the triggers keep one per
 * account, day, coin, symbol and type of its bills, and keep them while a month is archived), one
 * probe of rollup_rows' key per account, however many rows the fleet has.
 */
export const ACCOUNTS_WITH_BILLS_SQL = `SELECT k.name AS a FROM account_keys k
  WHERE EXISTS (SELECT FROM rollup_rows r WHERE r.account_id = k.id) ORDER BY 1`;

/** `usage`: the command line must change (exit 2); otherwise there is nothing to work on yet. */
export class AccountChoiceError extends Error {
  override name = "AccountChoiceError";
  constructor(
    message: string,
    readonly usage: boolean,
  ) {
    super(message);
  }
}

export function chooseAccount(accounts: readonly string[], given: string | undefined): string {
  if (given !== undefined) {
    if (accounts.includes(given)) return given;
    const known = accounts.join(", ") || "none";
    throw new AccountChoiceError(
      `--account ${given}: no bills are stored for that account (accounts with bills: ${known})`,
      true,
    );
  }
  if (accounts.length === 1) return accounts[0]!;
  if (accounts.length === 0) throw new AccountChoiceError("no bills are stored yet: sync first", false);
  throw new AccountChoiceError(`several accounts have bills (${accounts.join(", ")}): choose one with --account`, true);
}
