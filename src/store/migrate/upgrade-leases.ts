// The bills upgrade holds the bills run lease (run-lease.ts) of every account it knows for as long
// as it runs, the swap migration included: no bills run of any worker or command writes meanwhile
// (a busy account's bills job is skipped, a backfill window put back, `sync --once` exits 5), while
// snapshots go on. Runs in flight are waited for. The swap migration counts every account's bills
// again under a table lock, so a bill written by someone not taking leases is a loud failure of
// the swap, never a bill lost: the next `migrate` copies it.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { createLeaseKeeper, type LeaseKeeper } from "../lease-keeper.ts";
import { pgPoolConfig } from "../pg-config.ts";
import { AccountBusyError } from "../run-lease.ts";

/** How a migrate copying the bills shows in run_leases.holder (after "<host> pid <pid> "). */
export const UPGRADE_HOLDER = "migrate (bills upgrade)";

// Every account that has or may write bills: those in bills (one index probe each: a loose scan of
// the primary key), registered, with a cursor, or with a bills lease row.
const KNOWN_ACCOUNTS = `
WITH RECURSIVE billed AS (
  (SELECT account_name FROM bills ORDER BY account_name LIMIT 1)
  UNION ALL
  SELECT (SELECT b.account_name FROM bills b WHERE b.account_name > billed.account_name ORDER BY b.account_name LIMIT 1)
  FROM billed
  WHERE billed.account_name IS NOT NULL
)
SELECT account_name FROM billed WHERE account_name IS NOT NULL
UNION SELECT name FROM accounts
UNION SELECT account_name FROM sync_state
UNION SELECT account_name FROM run_leases WHERE stream_group = 'bills'
ORDER BY 1`;

export async function knownAccounts(client: pg.ClientBase): Promise<string[]> {
  return (await client.query<{ account_name: string }>(KNOWN_ACCOUNTS)).rows.map((r) => r.account_name);
}

export interface UpgradeLeases {
  /** Aborted when a lease is lost (not renewed in time): the copy stops. */
  signal: AbortSignal;
  release(): Promise<void>;
}

export interface UpgradeLeaseOptions {
  databaseUrl: string;
  /** The leases' length (renewed every third of it). */
  ttlMs: number;
  /** How long to wait for one account's run in flight, or for another migrate's upgrade. */
  waitMs: number;
  log: (message: string) => void;
}

/**
 * Takes the bills lease of every account: first each free one, then, in order, each busy one once
 * its run ends. Undefined when another migrate is upgrading the bills: it was waited for, and the
 * caller looks again at what is left to do.
 */
export async function takeUpgradeLeases(
  accounts: string[],
  o: UpgradeLeaseOptions,
): Promise<UpgradeLeases | undefined> {
  const keeper = createLeaseKeeper(pgPoolConfig(o.databaseUrl), { ttlMs: o.ttlMs, what: UPGRADE_HOLDER });
  o.log(`bills upgrade: taking the bills run lease of ${accounts.length} account(s) (their bills runs wait)`);
  try {
    const signals: AbortSignal[] = [];
    const busy: string[] = [];
    for (const account of accounts) {
      const lock = await keeper.tryAcquire(account, ["bills"]);
      if (lock) signals.push(lock.signal);
      else busy.push(account);
    }
    for (const account of busy) {
      const lock = await waitForRun(keeper, account, o);
      if (!lock) {
        await keeper.close();
        await waitForOtherUpgrade(o);
        return undefined;
      }
      signals.push(lock);
    }
    o.log(`bills upgrade: holding the bills run lease of ${accounts.length} account(s)`);
    return { signal: AbortSignal.any(signals), release: () => keeper.close() };
  } catch (error) {
    await keeper.close();
    throw error;
  }
}

/** The account's lease once its run in flight ends; undefined when another upgrade holds it. */
async function waitForRun(keeper: LeaseKeeper, account: string, o: UpgradeLeaseOptions) {
  let holder: string | undefined;
  try {
    return (await keeper.acquire(account, ["bills"])).signal;
  } catch (error) {
    if (!(error instanceof AccountBusyError)) throw error;
    holder = error.holder;
  }
  if (holder?.endsWith(` ${UPGRADE_HOLDER}`)) return undefined;
  o.log(`bills upgrade: waiting for the bills run of account "${account}" to end (${holder ?? "another process"})`);
  try {
    const lock = await keeper.acquire(account, ["bills"], { wait: true, signal: AbortSignal.timeout(o.waitMs) });
    return lock.signal;
  } catch (error) {
    if (!(error instanceof AccountBusyError)) throw error;
    throw new Error(
      `bills upgrade: the bills run of account "${account}" (${error.holder ?? holder ?? "another process"}) ` +
        `held its lease for over ${o.waitMs} ms; stop it (or the worker) and run \`ledger-sync migrate\` again`,
      { cause: error },
    );
  }
}

const OTHER_UPGRADE = `
SELECT holder FROM run_leases
WHERE stream_group = 'bills' AND holder LIKE '% ' || $1 AND expires_at > now()
LIMIT 1`;

/** Waits while another migrate holds leases as the upgrade; fails naming it past `waitMs`. */
async function waitForOtherUpgrade(o: UpgradeLeaseOptions): Promise<void> {
  const pool = new pg.Pool({ ...pgPoolConfig(o.databaseUrl), max: 1 });
  pool.on("error", () => undefined);
  try {
    const deadline = performance.now() + o.waitMs;
    for (let said = false; ; said = true) {
      const holder = (await pool.query<{ holder: string }>(OTHER_UPGRADE, [UPGRADE_HOLDER])).rows[0]?.holder;
      if (holder === undefined) return;
      if (!said) o.log(`bills upgrade: waiting for another migrate copying the bills (${holder})`);
      if (performance.now() >= deadline)
        throw new Error(
          `bills upgrade: another migrate (${holder}) has been copying the bills for over ${o.waitMs} ms; ` +
            "run `ledger-sync migrate` again once it is done",
        );
      await sleep(1000);
    }
  } finally {
    await pool.end().catch(() => undefined);
  }
}
