// verify of every account: which accounts have bills, and each account's outcome handed on in
// account order as soon as it and those before it are done, with up to `concurrency` accounts
// checked at once (each on a connection of its own). Memory holds at most that many outcomes,
// whatever the size of the fleet.
import type { Db } from "../store/prisma.ts";

// The accounts with bills in the order of bills_pkey (account_name, bill_id): one index probe per
// account (a loose index scan), where SELECT DISTINCT would read every bill's index entry.
const ACCOUNTS_WITH_BILLS = `
  WITH RECURSIVE a AS (
    (SELECT account_name FROM bills ORDER BY account_name LIMIT 1)
    UNION ALL
    SELECT (SELECT b.account_name FROM bills b WHERE b.account_name > a.account_name ORDER BY b.account_name LIMIT 1)
    FROM a WHERE a.account_name IS NOT NULL
  )
  SELECT account_name AS a FROM a WHERE account_name IS NOT NULL`;

export async function accountsWithBills(db: Db): Promise<string[]> {
  return (await db.$queryRawUnsafe<{ a: string }[]>(ACCOUNTS_WITH_BILLS)).map((r) => r.a);
}

/**
 * `run` for each account, up to `concurrency` at once; the results in the accounts' order. A failure
 * is thrown where its result would have come, and no account after it is started.
 */
export async function* inAccountOrder<T>(
  accounts: readonly string[],
  concurrency: number,
  run: (account: string) => Promise<T>,
): AsyncGenerator<T> {
  const running: Promise<T>[] = [];
  let next = 0;
  const start = () => {
    const p = run(accounts[next++]!);
    // Awaited in turn below; until then a failure must not count as unhandled.
    p.catch(() => undefined);
    running.push(p);
  };
  while (next < accounts.length && running.length < Math.max(1, concurrency)) start();
  while (running.length > 0) {
    const result = await running.shift()!;
    if (next < accounts.length) start();
    yield result;
  }
}
