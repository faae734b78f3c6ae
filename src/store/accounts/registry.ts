// The accounts table: accounts registered with `ledger-sync accounts`, their settings and sealed
// credentials. Every write is one statement or one transaction: a refused write leaves nothing.
import type { SealedCredentials } from "../../config/sealed-credentials.ts";
import type { Db } from "../prisma.ts";
import type { AccountStatus } from "./columns.ts";

export type AccountBillsSource = "v2" | "v3";

/** What `accounts list` and `show` print: everything but the sealed columns. */
export interface RegisteredAccount {
  name: string;
  uid: string;
  status: AccountStatus;
  coinIds: string[];
  /** null: BILLS_SOURCE. */
  billsSource: AccountBillsSource | null;
  /** null: BACKFILL_FROM. */
  backfillFromMs: number | null;
  masterKeyId: string;
  credentialsVersion: number;
  credentialsRotatedAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

export interface SealedAccount extends RegisteredAccount {
  sealed: SealedCredentials;
}

export interface NewAccount {
  name: string;
  uid: string;
  coinIds: string[];
  billsSource: AccountBillsSource | null;
  backfillFromMs: number | null;
  sealed: SealedCredentials;
}

/** A name or UID already registered: nothing was written. */
export class AccountConflictError extends Error {
  override name = "AccountConflictError";
}

/** The account named is not registered. */
export class UnknownAccountError extends Error {
  override name = "UnknownAccountError";
  constructor(readonly account: string) {
    super(`account "${account}" is not registered (see \`ledger-sync accounts list\`)`);
  }
}

type Row = Awaited<ReturnType<Db["account"]["findFirstOrThrow"]>>;

const PUBLIC_SELECT = {
  name: true,
  uid: true,
  status: true,
  coinIds: true,
  billsSource: true,
  backfillFrom: true,
  masterKeyId: true,
  credentialsVersion: true,
  credentialsRotatedAt: true,
  createdAt: true,
  updatedAt: true,
} as const;

function toRegistered(r: Omit<Row, "wrappedKey" | "sealedCredentials">): RegisteredAccount {
  return {
    name: r.name,
    uid: r.uid,
    status: r.status as AccountStatus,
    coinIds: r.coinIds ?? [],
    billsSource: (r.billsSource as AccountBillsSource | null) ?? null,
    backfillFromMs: r.backfillFrom === null ? null : r.backfillFrom.getTime(),
    masterKeyId: r.masterKeyId,
    credentialsVersion: r.credentialsVersion,
    credentialsRotatedAt: r.credentialsRotatedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

function toSealed(r: Row): SealedAccount {
  return {
    ...toRegistered(r),
    sealed: {
      masterKeyId: r.masterKeyId,
      wrappedKey: Buffer.from(r.wrappedKey),
      sealed: Buffer.from(r.sealedCredentials),
    },
  };
}

/** Every registered account without its sealed columns, by name. */
export async function listAccounts(db: Db): Promise<RegisteredAccount[]> {
  const rows = await db.account.findMany({ select: PUBLIC_SELECT, orderBy: { name: "asc" } });
  return rows.map(toRegistered);
}

/** Every registered account with its sealed credentials (workers, and commands that call the exchange). */
export async function listSealedAccounts(db: Db): Promise<SealedAccount[]> {
  return (await db.account.findMany({ orderBy: { name: "asc" } })).map(toSealed);
}

export async function findSealedAccount(db: Db, name: string): Promise<SealedAccount | undefined> {
  const row = await db.account.findUnique({ where: { name } });
  return row ? toSealed(row) : undefined;
}

/** Refuses a name or UID that is registered already, naming the account that has it. */
async function assertFree(db: Db, a: { name: string; uid: string }, exceptName?: string): Promise<void> {
  if (exceptName === undefined && (await db.account.findUnique({ where: { name: a.name }, select: { name: true } })))
    throw new AccountConflictError(
      `account "${a.name}" is registered already (rotate its key with \`accounts rotate\`)`,
    );
  const holder = await db.account.findFirst({ where: { uid: a.uid }, select: { name: true } });
  if (holder && holder.name !== exceptName)
    throw new AccountConflictError(
      `the key's exchange account (UID ${a.uid}) is registered already as "${holder.name}": ` +
        "one account under two names would count its books twice",
    );
}

function data(a: NewAccount) {
  return {
    name: a.name,
    uid: a.uid,
    coinIds: a.coinIds,
    billsSource: a.billsSource,
    backfillFrom: a.backfillFromMs === null ? null : new Date(a.backfillFromMs),
    masterKeyId: a.sealed.masterKeyId,
    wrappedKey: new Uint8Array(a.sealed.wrappedKey),
    sealedCredentials: new Uint8Array(a.sealed.sealed),
  };
}

/** Registers one account; the unique keys decide a race between two `add`s of one UID. */
export async function insertAccount(db: Db, a: NewAccount): Promise<void> {
  await assertFree(db, a);
  try {
    await db.account.create({ data: data(a) });
  } catch (err) {
    if ((err as { code?: string }).code === "P2002") {
      await assertFree(db, a);
      throw new AccountConflictError(`account "${a.name}" (UID ${a.uid}) was registered by another command meanwhile`);
    }
    throw err;
  }
}

/** What `import` did with each entry. */
export type ImportOutcome = "added" | "updated" | "unchanged";

/**
 * Registers or updates many accounts in one transaction: all of them, or none. An entry whose name
 * is registered with the same UID is updated (settings, and credentials when they differ, judged
 * by `sameCredentials`); a name registered with another UID, or a UID registered under another
 * name, refuses the whole import through `conflict(i, message)`.
 */
export async function importAccounts(
  db: Db,
  entries: NewAccount[],
  sameCredentials: (existing: SealedAccount, entry: NewAccount) => boolean,
  conflict: (index: number, message: string) => Error,
): Promise<ImportOutcome[]> {
  return db.$transaction(
    async (tx) => {
      const existing = new Map((await tx.account.findMany()).map((r) => [r.name, toSealed(r)]));
      const byUid = new Map([...existing.values()].map((a) => [a.uid, a.name]));
      const outcomes: ImportOutcome[] = [];
      for (const [i, e] of entries.entries()) {
        const current = existing.get(e.name);
        const uidHolder = byUid.get(e.uid);
        if (current && current.uid !== e.uid)
          throw conflict(i, `account "${e.name}" is registered for UID ${current.uid}; this key is UID ${e.uid}`);
        if (uidHolder !== undefined && uidHolder !== e.name)
          throw conflict(i, `UID ${e.uid} is registered already as "${uidHolder}"`);
        byUid.set(e.uid, e.name);
        if (!current) {
          await tx.account.create({ data: data(e) });
          outcomes.push("added");
          continue;
        }
        const sameSettings =
          current.coinIds.join(",") === e.coinIds.join(",") &&
          current.billsSource === e.billsSource &&
          current.backfillFromMs === e.backfillFromMs;
        const sameKeys = sameCredentials(current, e);
        if (sameSettings && sameKeys) {
          outcomes.push("unchanged");
          continue;
        }
        await tx.account.update({
          where: { name: e.name },
          data: {
            coinIds: e.coinIds,
            billsSource: e.billsSource,
            backfillFrom: e.backfillFromMs === null ? null : new Date(e.backfillFromMs),
            updatedAt: new Date(),
            ...(sameKeys
              ? {}
              : {
                  masterKeyId: e.sealed.masterKeyId,
                  wrappedKey: new Uint8Array(e.sealed.wrappedKey),
                  sealedCredentials: new Uint8Array(e.sealed.sealed),
                  credentialsVersion: { increment: 1 },
                  credentialsRotatedAt: new Date(),
                }),
          },
        });
        outcomes.push("updated");
      }
      return outcomes;
    },
    { timeout: 600_000 },
  );
}

/** Sets active or disabled; false when the account is not registered. */
export async function setAccountStatus(db: Db, name: string, status: AccountStatus): Promise<void> {
  const n = await db.account.updateMany({ where: { name }, data: { status, updatedAt: new Date() } });
  if (n.count === 0) throw new UnknownAccountError(name);
}

/** New credentials for a registered account: the key must belong to the same exchange account. */
export async function replaceCredentials(db: Db, name: string, uid: string, sealed: SealedCredentials): Promise<void> {
  const current = await db.account.findUnique({ where: { name }, select: { uid: true } });
  if (!current) throw new UnknownAccountError(name);
  if (current.uid !== uid)
    throw new AccountConflictError(
      `the new key belongs to UID ${uid}, but account "${name}" is UID ${current.uid}: a key of another ` +
        "exchange account is added as a new account, not rotated in",
    );
  await db.account.update({
    where: { name },
    data: {
      masterKeyId: sealed.masterKeyId,
      wrappedKey: new Uint8Array(sealed.wrappedKey),
      sealedCredentials: new Uint8Array(sealed.sealed),
      credentialsVersion: { increment: 1 },
      credentialsRotatedAt: new Date(),
      updatedAt: new Date(),
    },
  });
}

/** Re-wraps every account's data key in one transaction (`accounts rekey`); returns how many. */
export async function rewrapAll(db: Db, rewrap: (a: SealedAccount) => SealedCredentials): Promise<number> {
  return db.$transaction(
    async (tx) => {
      const rows = (await tx.account.findMany({ orderBy: { name: "asc" } })).map(toSealed);
      for (const a of rows) {
        const next = rewrap(a);
        // The credentials themselves do not change: workers keep the ones they hold (same version).
        await tx.account.update({
          where: { name: a.name },
          data: {
            masterKeyId: next.masterKeyId,
            wrappedKey: new Uint8Array(next.wrappedKey),
            sealedCredentials: new Uint8Array(next.sealed),
            updatedAt: new Date(),
          },
        });
      }
      return rows.length;
    },
    { timeout: 600_000 },
  );
}

/**
 * Unregisters an account: its credentials and schedule go; its books (bills, snapshots, runs,
 * closes) stay, under its name, for the accountant and the auditor.
 */
export async function deleteAccount(db: Db, name: string): Promise<void> {
  await db.$transaction(async (tx) => {
    const n = await tx.account.deleteMany({ where: { name } });
    if (n.count === 0) throw new UnknownAccountError(name);
    await tx.syncSchedule.deleteMany({ where: { accountName: name } });
  });
}
