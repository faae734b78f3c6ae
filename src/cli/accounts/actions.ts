// What each `ledger-sync accounts` subcommand does, on an open database. Every write proves the
// key first and then writes in one statement or one transaction: a refusal leaves nothing behind.
import { loadAccounts } from "../../config/accounts.ts";
import { ConfigError, type Config, type ExchangeCredentials } from "../../config/index.ts";
import { NEW_MASTER_KEY_NAMES, requireMasterKey, type MasterKey } from "../../config/master-key.ts";
import { rewrap, seal, unseal } from "../../config/sealed-credentials.ts";
import { commandBudgetGates, type BudgetGates } from "../../exchange/budget-gates.ts";
import type { Logger } from "../../log/logger.ts";
import type { Db } from "../../store/prisma.ts";
import {
  deleteAccount,
  importAccounts,
  insertAccount,
  listSealedAccounts,
  replaceCredentials,
  rewrapAll,
  findSealedAccount,
  type AccountBillsSource,
  type ImportOutcome,
  type NewAccount,
  UnknownAccountError,
} from "../../store/accounts/registry.ts";
import { sleep } from "../../exchange/sleep.ts";
import { purgeAccountBooks, type PurgeResult } from "../../store/accounts/purge.ts";
import { acquireRunLease } from "../../store/lease-keeper.ts";
import { readImportFile, ImportError } from "./import-file.ts";
import { proofCoin, proveKey } from "./prove-key.ts";
import { pgPoolConfig } from "../../store/pg-config.ts";

export interface ActionContext {
  config: Config;
  logger: Logger;
  db: Db;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** The master key to seal with; every registered account must already be sealed under it. */
async function sealingKey(c: ActionContext, purpose: string): Promise<MasterKey> {
  const master = requireMasterKey(c.env, purpose);
  const other = (await listSealedAccounts(c.db)).find((a) => a.masterKeyId !== master.id);
  if (other)
    throw new ConfigError(
      `${master.source} gives master key id ${master.id}, but account "${other.name}" is sealed under ` +
        `${other.masterKeyId}: set the key the accounts table uses (or re-wrap them all with \`accounts rekey\`)`,
    );
  return master;
}

/** A name in ACCOUNTS_FILE or ACCOUNT_NAME stays there: the table does not shadow it. */
function assertNotConfigured(config: Config, env: NodeJS.ProcessEnv, name: string): void {
  if (!config.accountsFile && !config.exchange.credentials) return;
  const clash = loadAccounts(config, env).find((a) => a.name === name);
  if (clash)
    throw new ConfigError(
      `account "${name}" is configured by ${clash.origin === "file" ? "ACCOUNTS_FILE" : "ACCOUNT_NAME"} already`,
    );
}

async function withGates<T>(c: ActionContext, run: (gates: BudgetGates) => Promise<T>): Promise<T> {
  const gates = await commandBudgetGates(c.config, c.logger);
  try {
    return await run(gates);
  } finally {
    await gates.close();
  }
}

export interface AddOptions {
  coinIds: string[];
  backfillFromMs: number | null;
  billsSource: AccountBillsSource | null;
  uidCoin?: string;
}

export async function addAccount(
  c: ActionContext,
  name: string,
  credentials: ExchangeCredentials,
  o: AddOptions,
): Promise<string> {
  const master = await sealingKey(c, "seal the account's credentials");
  assertNotConfigured(c.config, c.env, name);
  if (await findSealedAccount(c.db, name))
    throw new ConfigError(`account "${name}" is registered already (rotate its key with \`accounts rotate\`)`);
  const coin = proofCoin(o.coinIds, c.config, o.uidCoin);
  const uid = await withGates(c, (g) => proveKey(c.config, c.logger, g, name, credentials, coin, c.signal));
  await insertAccount(c.db, { name, uid, ...o, sealed: seal(master, name, credentials) });
  return uid;
}

export async function rotateAccount(
  c: ActionContext,
  name: string,
  credentials: ExchangeCredentials,
  uidCoin?: string,
): Promise<string> {
  const master = await sealingKey(c, "seal the account's new credentials");
  const current = await findSealedAccount(c.db, name);
  if (!current) throw new ConfigError(`account "${name}" is not registered (see \`ledger-sync accounts list\`)`);
  const coin = proofCoin(current.coinIds, c.config, uidCoin);
  const uid = await withGates(c, (g) => proveKey(c.config, c.logger, g, name, credentials, coin, c.signal));
  await replaceCredentials(c.db, name, uid, seal(master, name, credentials));
  return uid;
}

async function hasBooks(db: Db, name: string): Promise<boolean> {
  const [r] = await db.$queryRawUnsafe<{ any: boolean }[]>(
    `SELECT EXISTS (SELECT 1 FROM sync_state WHERE account_name = $1)
         OR EXISTS (SELECT 1 FROM bills WHERE account_name = $1) AS any`,
    name,
  );
  return r!.any;
}

/** Workers re-read the accounts at least this often (ACCOUNTS_REFRESH_MS is at most 10 s). */
const WORKERS_LET_GO_MS = 11_000;

/**
 * Unregisters the account (workers stop it within ACCOUNTS_REFRESH_MS); with `deleteBooks`, then
 * waits for every worker to have let go of it, takes its run leases and deletes its books. A name no
 * longer registered may still have its books deleted (a purge interrupted after the first step).
 */
export async function removeAccount(
  c: ActionContext,
  name: string,
  o: { deleteBooks: boolean; databaseUrl: string; say: (line: string) => void },
): Promise<PurgeResult | undefined> {
  const registered = await findSealedAccount(c.db, name);
  if (!o.deleteBooks) {
    await deleteAccount(c.db, name);
    return undefined;
  }
  assertNotConfigured(c.config, c.env, name);
  if (!registered && !(await hasBooks(c.db, name))) throw new UnknownAccountError(name);
  if (registered) {
    await deleteAccount(c.db, name);
    o.say(`account ${name} unregistered; waiting ${WORKERS_LET_GO_MS / 1000} s for workers to let go of it`);
    await sleep(WORKERS_LET_GO_MS, c.signal);
  }
  const lock = await acquireRunLease(pgPoolConfig(o.databaseUrl), name, ["bills", "snapshots"], {
    ttlMs: c.config.database.runLeaseMs,
    what: "accounts remove",
    wait: true,
    ...(c.signal ? { signal: c.signal } : {}),
  });
  try {
    return await purgeAccountBooks(c.db, name);
  } finally {
    await lock.release();
  }
}

/** Keys proven at once during an import: a few, so the weight budget spreads over the fleet. */
const IMPORT_CONCURRENCY = 8;

export async function importFile(
  c: ActionContext,
  file: string,
  uidCoin?: string,
): Promise<Record<ImportOutcome, number>> {
  const entries = readImportFile(file, c.env);
  const master = await sealingKey(c, "seal the imported credentials");
  for (const e of entries) assertNotConfigured(c.config, c.env, e.name);
  const at = (i: number, message: string) =>
    new ImportError(`${file}:${entries[i]!.line}: ${message}; nothing imported`);
  const uids: string[] = new Array<string>(entries.length);
  await withGates(c, async (gates) => {
    let next = 0;
    const work = async () => {
      for (let i = next++; i < entries.length; i = next++) {
        const e = entries[i]!;
        try {
          uids[i] = await proveKey(
            c.config,
            c.logger,
            gates,
            e.name,
            e.credentials,
            proofCoin(e.coinIds, c.config, uidCoin),
            c.signal,
          );
        } catch (err) {
          throw at(i, (err as Error).message);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(IMPORT_CONCURRENCY, entries.length) }, work));
  });
  const firstLineOfUid = new Map<string, number>();
  for (const [i, uid] of uids.entries()) {
    const first = firstLineOfUid.get(uid);
    if (first !== undefined)
      throw at(i, `UID ${uid} is also the key of line ${first}: one exchange account, two names`);
    firstLineOfUid.set(uid, entries[i]!.line);
  }
  const rows: NewAccount[] = entries.map((e, i) => ({
    name: e.name,
    uid: uids[i]!,
    coinIds: e.coinIds,
    backfillFromMs: e.backfillFromMs,
    billsSource: e.billsSource,
    sealed: seal(master, e.name, e.credentials),
  }));
  const sameCredentials = (existing: { name: string; sealed: NewAccount["sealed"] }, entry: NewAccount) => {
    const a = unseal(master, existing.name, existing.sealed);
    const b = entries.find((e) => e.name === entry.name)!.credentials;
    return a.apiKey === b.apiKey && a.apiSecret === b.apiSecret && a.passphrase === b.passphrase;
  };
  const outcomes = await importAccounts(c.db, rows, sameCredentials, at);
  const counts: Record<ImportOutcome, number> = { added: 0, updated: 0, unchanged: 0 };
  for (const o of outcomes) counts[o]++;
  return counts;
}

/** Re-wraps every account's data key under the new master key; the credentials stay as they are. */
export async function rekeyAccounts(c: ActionContext): Promise<{ accounts: number; from: string; to: string }> {
  const current = requireMasterKey(c.env, "open the accounts' data keys");
  const next = requireMasterKey(c.env, "re-wrap the accounts' data keys", NEW_MASTER_KEY_NAMES);
  const n = await rewrapAll(c.db, (a) => rewrap(current, next, a.name, a.sealed));
  return { accounts: n, from: current.id, to: next.id };
}
