// verify of every account: which accounts have bills or closes, and each account's outcome handed on in
// account order as soon as it and those before it are done, with up to `concurrency` accounts
// checked at once (each on a connection of its own). Memory holds at most that many outcomes,
// whatever the size of the fleet. With an anchors directory, the account folders in it that verify did
// not visit (an account with no bill left, a folder that names no account) are checked too.
import { accountFolder, anchorFolders, folderAccount } from "../periods/anchors/anchor-files.ts";
import { ANCHORS_CHECK, checkAnchors } from "../periods/seal-chain-check.ts";
import { readSeals, type StoredSeal } from "../periods/seal-chain.ts";
import type { Db } from "../store/prisma.ts";
import { accountReport, type AccountReport } from "./report.ts";

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
 * The accounts verify visits: those with bills, and those with a close even when no bill of theirs is
 * left. Sealed months whose bills were all deleted must fail their closed-period check, not leave the
 * account out of the report (which would pass). `only`: that account, if it has either.
 */
export async function accountsToVerify(db: Db, only?: string): Promise<string[]> {
  if (only !== undefined)
    return (
      await db.$queryRawUnsafe<{ a: string }[]>(
        `SELECT $1::text AS a WHERE EXISTS (SELECT 1 FROM bills WHERE account_name = $1)
            OR EXISTS (SELECT 1 FROM period_closes WHERE account_name = $1)`,
        only,
      )
    ).map((r) => r.a);
  return (
    await db.$queryRawUnsafe<{ a: string }[]>(
      `SELECT a FROM (${ACCOUNTS_WITH_BILLS}) b UNION SELECT account_name FROM period_closes ORDER BY 1`,
    )
  ).map((r) => r.a);
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

/**
 * The anchors check of every account folder in `dir` that verify did not visit (`visited`: the
 * accounts it checked), one report each; only `only`'s folder when verify runs for one account. An
 * account whose bills, closes and seals were all deleted is visited by nothing else, and its anchors
 * are the only trace left: they must fail here, naming it and its periods, or the loss passes
 * silently. A folder whose name encodes no account is a failure too: anchors nothing compares
 * are no proof. The seals come in one statement, whatever the number of folders.
 */
export async function unvisitedAnchorReports(
  db: Db,
  dir: string,
  visited: readonly string[],
  only?: string,
): Promise<AccountReport[]> {
  let folders: string[];
  try {
    folders = await anchorFolders(dir);
  } catch (err) {
    return [folderReport(dir, only ?? dir, `the anchors cannot be read: ${(err as Error).message}`)];
  }
  if (only !== undefined) folders = folders.filter((f) => f === accountFolder(only));
  const seen = new Set(visited);
  const bad = folders.filter((f) => folderAccount(f) === undefined);
  const accounts = folders.map(folderAccount).filter((a): a is string => a !== undefined && !seen.has(a));
  const reports = bad.map((f) =>
    folderReport(
      dir,
      f,
      `folder "${f}" of ${dir} is not an account's anchors folder: its name is no account name as ` +
        "`close --anchors` writes it (percent-encoded), so its anchors are compared with nothing; " +
        "move it out of the anchors directory, or rename it to its account's encoded name",
    ),
  );
  if (accounts.length === 0) return reports;
  const seals = await readSeals(db, only);
  const byAccount = new Map<string, StoredSeal[]>();
  for (const s of seals) {
    const of = byAccount.get(s.fields.account);
    if (of) of.push(s);
    else byAccount.set(s.fields.account, [s]);
  }
  for (const account of accounts) {
    const check = await checkAnchors(byAccount.get(account) ?? [], dir, account);
    // An empty folder of an account with no seal: nothing to compare, nothing to report.
    if (check.status !== "skipped") reports.push(accountReport(account, [check]));
  }
  return reports;
}

/** A failing anchors check of something in the anchors directory that is no account's folder. */
function folderReport(dir: string, name: string, summary: string): AccountReport {
  return accountReport(name, [{ check: ANCHORS_CHECK, subject: "folder", status: "fail", summary, details: { dir } }]);
}
