// Legal holds (migration legal_holds): while an account has a hold not yet released, nothing of its
// books is pruned or deleted. Snapshot retention skips the account (snapshot-retention.ts) and a
// purge of its books is refused naming the hold (accounts/purge.ts); a hold outlives a purge, as the
// record of why the books were kept and when that ended. The wallet check's queue of readings
// (wallet-checks.ts) is trimmed whatever the holds: a reading is a copy of a collateral snapshot's
// figures, made to be compared once, and the snapshot it copies is kept under the hold.
//
// A prune or purge takes the account's hold lock (shared) before it reads the holds and keeps it to
// its commit; placing a hold takes it exclusively (the table's trigger), so a hold committed while a
// prune runs waits for that prune, and every prune after it sees the hold.
import type { Prisma } from "./generated/client.ts";
import type { Db } from "./prisma.ts";

type Tx = Prisma.TransactionClient;

/** The account's hold lock as the trigger legal_holds_guard takes it; `account` is a SQL expression. */
const holdLockKey = (account: string) => `hashtext('ledger_sync_legal_hold'), hashtext(${account})`;

export interface LegalHold {
  account: string;
  id: string;
  placedAt: Date;
  placedBy: string;
  reason: string;
  /** The database role that placed it. */
  dbUser: string;
  releasedAt: Date | null;
  releasedBy: string | null;
  releaseReason: string | null;
  releasedDbUser: string | null;
}

/** A hold refused, or an account's data kept because of one: nothing was changed. */
export class LegalHoldError extends Error {
  override name = "LegalHoldError";
}

interface HoldRow {
  account_name: string;
  id: string;
  placed_at: Date;
  placed_by: string;
  reason: string;
  db_user: string;
  released_at: Date | null;
  released_by: string | null;
  release_reason: string | null;
  released_db_user: string | null;
}

const COLUMNS = `account_name, id::text, placed_at, placed_by, reason, db_user, released_at, released_by,
       release_reason, released_db_user`;

function hold(r: HoldRow): LegalHold {
  return {
    account: r.account_name,
    id: r.id,
    placedAt: r.placed_at,
    placedBy: r.placed_by,
    reason: r.reason,
    dbUser: r.db_user,
    releasedAt: r.released_at,
    releasedBy: r.released_by,
    releaseReason: r.release_reason,
    releasedDbUser: r.released_db_user,
  };
}

/** `hold 3 placed 2026-11-29T10:00:00.000Z by alice: "subpoena 4711"`. */
export function holdText(h: LegalHold): string {
  return `hold ${h.id} placed ${h.placedAt.toISOString()} by ${h.placedBy}: ${JSON.stringify(h.reason)}`;
}

const blank = (text: string) => !/\S/.test(text);

/** The SQLSTATE of a PostgreSQL error, however the driver adapter wrapped it. */
function sqlState(err: unknown, depth = 0): string | undefined {
  if (err === null || typeof err !== "object" || depth > 4) return undefined;
  const e = err as { code?: unknown; originalCode?: unknown; meta?: { code?: unknown }; cause?: unknown };
  for (const c of [e.originalCode, e.meta?.code, e.code])
    if (typeof c === "string" && /^[0-9A-Z]{5}$/.test(c)) return c;
  return sqlState(e.cause, depth + 1);
}

/** A write the role may not make: holds are placed and released with the tables' owner's DATABASE_URL. */
function asOwnersAct(err: unknown, what: string): never {
  if (sqlState(err) === "42501" || /permission denied for table legal_holds/.test(String(err)))
    throw new LegalHoldError(
      `${what} needs the owner of the tables (the DATABASE_URL that runs migrate): ` +
        "the runtime role only reads legal holds",
    );
  throw err;
}

/** Every hold of the account (or of every account), oldest first; released ones too unless `activeOnly`. */
export async function listHolds(db: Db | Tx, o: { account?: string; activeOnly?: boolean } = {}): Promise<LegalHold[]> {
  const rows = await db.$queryRawUnsafe<HoldRow[]>(
    `SELECT ${COLUMNS}
     FROM legal_holds
     WHERE ($1::text IS NULL OR account_name = $1) AND (NOT $2::boolean OR released_at IS NULL)
     ORDER BY account_name, id`,
    o.account ?? null,
    o.activeOnly === true,
  );
  return rows.map(hold);
}

/**
 * The account's holds not released, read under its hold lock (shared), which the transaction keeps
 * to its end: no hold can be committed before the transaction's deletes are.
 */
export async function lockActiveHolds(tx: Tx, account: string): Promise<LegalHold[]> {
  // The lock first, in its own statement: a statement's snapshot is taken before the lock is granted,
  // so only the next statement sees a hold committed while this one waited.
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock_shared(${holdLockKey("$1")})`, account);
  return listHolds(tx, { account, activeOnly: true });
}

/** Refuses (LegalHoldError) to `what` while the account has a hold not released, naming each. */
export async function refuseUnderHold(tx: Tx, account: string, what: string): Promise<void> {
  const held = await lockActiveHolds(tx, account);
  if (held.length > 0) throw new LegalHoldError(underHoldMessage(account, held, what));
}

export function underHoldMessage(account: string, held: LegalHold[], what: string): string {
  return (
    `cannot ${what}: account "${account}" is under legal hold (${held.map(holdText).join("; ")}); ` +
    `\`ledger-sync accounts release ${account} --reason TEXT\` (as the tables' owner) ends a hold`
  );
}

export interface HoldRequest {
  account: string;
  /** Who: --by, by default the operating-system user. */
  by: string;
  reason: string;
}

/** Whether the database knows the account: registered, or with bills or runs stored under its name. */
async function knownAccount(db: Db, account: string): Promise<boolean> {
  const [r] = await db.$queryRawUnsafe<{ known: boolean }[]>(
    `SELECT EXISTS (SELECT 1 FROM accounts WHERE name = $1)
         OR EXISTS (SELECT 1 FROM account_keys WHERE name = $1)
         OR EXISTS (SELECT 1 FROM sync_runs WHERE account_name = $1) AS known`,
    account,
  );
  return r!.known;
}

/**
 * Places a hold. A name the database does not know is refused: a hold on a misspelt name would
 * protect nothing while the account it meant went on being pruned.
 */
export async function placeHold(db: Db, r: HoldRequest): Promise<LegalHold> {
  if (blank(r.reason)) throw new LegalHoldError("a legal hold needs a reason (--reason): the matter or the request");
  if (blank(r.by)) throw new LegalHoldError("--by must name who places the hold");
  if (!(await knownAccount(db, r.account)))
    throw new LegalHoldError(
      `account "${r.account}" is not registered and has no books here: nothing to hold (a misspelt name?)`,
    );
  const [row] = await db
    .$queryRawUnsafe<HoldRow[]>(
      `INSERT INTO legal_holds (account_name, placed_by, reason)
       VALUES ($1, $2, $3)
       RETURNING ${COLUMNS}`,
      r.account,
      r.by.trim(),
      r.reason.trim(),
    )
    .catch((err: unknown) => asOwnersAct(err, "placing a legal hold"));
  return hold(row!);
}

/**
 * Releases the account's hold `holdId`, or its one hold not released when none is named (several:
 * refused, naming them). The database sets the release's time and refuses a second release.
 */
export async function releaseHold(db: Db, r: HoldRequest & { holdId?: string }): Promise<LegalHold> {
  if (blank(r.reason)) throw new LegalHoldError("releasing a legal hold needs a reason (--reason)");
  if (blank(r.by)) throw new LegalHoldError("--by must name who releases the hold");
  if (r.holdId !== undefined && !/^[0-9]{1,18}$/.test(r.holdId))
    throw new LegalHoldError(`--hold ${r.holdId}: must be a hold id (\`accounts holds\` lists them)`);
  const active = await listHolds(db, { account: r.account, activeOnly: true });
  const chosen = r.holdId === undefined ? active : active.filter((h) => h.id === r.holdId);
  if (chosen.length === 0)
    throw new LegalHoldError(
      r.holdId === undefined
        ? `account "${r.account}" has no legal hold to release`
        : `account "${r.account}" has no unreleased legal hold ${r.holdId} ` +
            `(\`accounts holds ${r.account}\` lists them)`,
    );
  if (chosen.length > 1)
    throw new LegalHoldError(
      `account "${r.account}" has ${chosen.length} legal holds (${chosen.map(holdText).join("; ")}): ` +
        "name the one to release with --hold ID",
    );
  const [row] = await db
    .$queryRawUnsafe<HoldRow[]>(
      `UPDATE legal_holds
       SET released_at = now(), released_by = $3, release_reason = $4
       WHERE account_name = $1 AND id = $2::bigint AND released_at IS NULL
       RETURNING ${COLUMNS}`,
      r.account,
      chosen[0]!.id,
      r.by.trim(),
      r.reason.trim(),
    )
    .catch((err: unknown) => asOwnersAct(err, "releasing a legal hold"));
  if (!row) throw new LegalHoldError(`legal hold ${chosen[0]!.id} of account "${r.account}" was released meanwhile`);
  return hold(row);
}
