// Every account a process works on: the accounts of the plain variables or ACCOUNTS_FILE (as
// before the accounts table existed) and the active accounts of the table, with their credentials
// unsealed. One name in two places is refused: which credentials to use would be a guess.
import { loadAccounts, type AccountConfig } from "../../config/accounts.ts";
import { ConfigError, type Config, type ExchangeCredentials } from "../../config/index.ts";
import { requireMasterKey, type MasterKey } from "../../config/master-key.ts";
import { unseal, WrongMasterKeyError } from "../../config/sealed-credentials.ts";
import type { Db } from "../prisma.ts";
import { listSealedAccounts, type SealedAccount } from "./registry.ts";

export interface AccountDirectory {
  /** Accounts to sync. */
  accounts: AccountConfig[];
  /** Registered accounts that are disabled (paused). */
  disabled: string[];
  /** Registered accounts whose credentials could not be opened (tampered): named, never used. */
  unreadable: { account: string; error: Error }[];
}

/** The accounts of the variables or ACCOUNTS_FILE; none when neither names any (no credentials set). */
function configuredAccounts(config: Config, env: NodeJS.ProcessEnv): AccountConfig[] {
  if (!config.accountsFile && !config.exchange.credentials) return [];
  return loadAccounts(config, env);
}

/** The accounts table's rows; none in a database not migrated yet (its other tables say so when used). */
async function registeredRows(db: Db): Promise<SealedAccount[]> {
  try {
    return await listSealedAccounts(db);
  } catch (err) {
    if ((err as { code?: string }).code === "P2021") return [];
    throw err;
  }
}

/** The table account as the streams take it, with its (unsealed) credentials. */
export function tableAccount(config: Config, a: SealedAccount, credentials: ExchangeCredentials): AccountConfig {
  return {
    name: a.name,
    coinIds: a.coinIds,
    backfillFromMs: a.backfillFromMs ?? config.backfillFromMs,
    credentials,
    billsSource: a.billsSource ?? config.billsSource,
    origin: "table",
    uid: a.uid,
    credentialsVersion: a.credentialsVersion,
  };
}

/** The master key opening `rows`, or a ConfigError naming the variable (exit 2). */
export function masterKeyFor(rows: SealedAccount[], env: NodeJS.ProcessEnv): MasterKey | undefined {
  if (rows.length === 0) return undefined;
  return requireMasterKey(env, `open the credentials of the ${rows.length} account(s) in the accounts table`);
}

/** A wrong master key is a configuration error (exit 2); the message names the variable. */
export function openAccount(config: Config, a: SealedAccount, master: MasterKey): AccountConfig {
  try {
    return tableAccount(config, a, unseal(master, a.name, a.sealed));
  } catch (err) {
    if (err instanceof WrongMasterKeyError) throw new ConfigError(err.message);
    throw err;
  }
}

/**
 * `known`: the accounts a running worker holds. Their credentials are reused while the row's
 * credentials_version is unchanged, so a worker keeps syncing through `accounts rekey` (its master
 * key may be the old one), and a row it cannot open is reported in `unreadable` instead of failing
 * the whole read. Without `known` (a command, a worker's boot) a wrong master key is a ConfigError.
 */
export async function loadAccountDirectory(
  config: Config,
  db: Db,
  env: NodeJS.ProcessEnv = process.env,
  known?: ReadonlyMap<string, AccountConfig>,
): Promise<AccountDirectory> {
  const configured = configuredAccounts(config, env);
  const rows = await registeredRows(db);
  const active = rows.filter((r) => r.status === "active");
  const reusable = (r: SealedAccount) => {
    const k = known?.get(r.name);
    return k?.origin === "table" && k.credentialsVersion === r.credentialsVersion ? k : undefined;
  };
  const master = masterKeyFor(
    active.filter((r) => !reusable(r)),
    env,
  );
  const directory: AccountDirectory = {
    accounts: [...configured],
    disabled: rows.filter((r) => r.status === "disabled").map((r) => r.name),
    unreadable: [],
  };
  const names = new Map(configured.map((a) => [a.name, a.origin === "file" ? "ACCOUNTS_FILE" : "ACCOUNT_NAME"]));
  for (const r of rows) {
    const where = names.get(r.name);
    if (where !== undefined)
      throw new ConfigError(
        `account "${r.name}" is both in ${where} and in the accounts table: rename one of them ` +
          "(which credentials to use would be a guess)",
      );
  }
  for (const r of active) {
    const held = reusable(r);
    if (held) {
      directory.accounts.push(tableAccount(config, r, held.credentials));
      continue;
    }
    try {
      directory.accounts.push(openAccount(config, r, master!));
    } catch (err) {
      if (err instanceof ConfigError && known === undefined) throw err;
      directory.unreadable.push({ account: r.name, error: err as Error });
    }
  }
  if (directory.accounts.length === 0 && directory.unreadable.length === 0 && directory.disabled.length === 0)
    // Nothing anywhere: the plain variables' own message says what to set.
    return { ...directory, accounts: loadAccounts(config, env) };
  return directory;
}

/** One account by name from the directory, or a ConfigError listing what there is. */
export function pickAccount(directory: AccountDirectory, name: string): AccountConfig {
  const found = directory.accounts.find((a) => a.name === name);
  if (found) return found;
  const why = directory.disabled.includes(name)
    ? "is disabled (`ledger-sync accounts enable` resumes it)"
    : directory.unreadable.find((u) => u.account === name)?.error.message;
  if (why) throw new ConfigError(`account "${name}" ${why}`);
  const known = directory.accounts.map((a) => a.name).join(", ") || "none";
  throw new ConfigError(`--account ${name} is not a configured or registered account (accounts: ${known})`);
}
