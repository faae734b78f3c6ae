// The accounts ledger-sync keeps in sync. By default one account from the plain variables
// (ACCOUNT_NAME, SYNC_COIN_IDS, BACKFILL_FROM, EXCHANGE_API_*). With ACCOUNTS_FILE, a JSON or YAML
// list of accounts; the file names the environment variables that hold each account's secrets,
// so it can be committed and shared without any secret in it.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { BILLS_SOURCES, parseInstant } from "./env-schema.ts";
import { ConfigError, requireCredentials, type Config, type ExchangeCredentials } from "./index.ts";

export type BillSource = (typeof BILLS_SOURCES)[number];

export interface AccountConfig {
  name: string;
  coinIds: string[];
  backfillFromMs: number;
  credentials: ExchangeCredentials;
  /** The endpoint the bills stream reads for this account (BILLS_SOURCE, or its own billsSource). */
  billsSource: BillSource;
  /** Where the account is configured: the plain variables, ACCOUNTS_FILE, or the accounts table. */
  origin?: "env" | "file" | "table";
  /** The exchange's user id, when known (accounts in the table: read when their key was proven). */
  uid?: string;
  /** Bumped when the credentials are rotated (accounts in the table). */
  credentialsVersion?: number;
}

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be the name of an environment variable");

/** One entry of ACCOUNTS_FILE (also what `accounts import` reads). */
export const accountEntry = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "must be 1-64 letters, digits, '_', '.' or '-'"),
  coinIds: z
    .array(z.union([z.string().regex(/^[0-9]+$/, "must be numeric"), z.number().int().nonnegative()]).transform(String))
    .default([]),
  backfillFrom: z.union([z.string(), z.number().int().positive()]).optional(),
  billsSource: z.enum(BILLS_SOURCES, { message: `must be one of ${BILLS_SOURCES.join(", ")}` }).optional(),
  apiKeyEnv: envName,
  apiSecretEnv: envName,
  passphraseEnv: envName,
});

export const accountsFile = z.strictObject({
  accounts: z.array(accountEntry).min(1, "must list at least one account"),
});

export function loadAccounts(config: Config, env: NodeJS.ProcessEnv = process.env): AccountConfig[] {
  if (!config.accountsFile) {
    return [
      {
        name: config.accountName,
        coinIds: config.coinIds,
        backfillFromMs: config.backfillFromMs,
        credentials: requireCredentials(config, env),
        billsSource: config.billsSource,
        origin: "env",
      },
    ];
  }
  const file = config.accountsFile;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`ACCOUNTS_FILE ${file} cannot be read: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(
      `ACCOUNTS_FILE ${file} is not valid ${/\.json$/i.test(file) ? "JSON" : "YAML"}: ` +
        `${(err as Error).message.split("\n")[0]}`,
    );
  }
  const parsed = accountsFile.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(top level)"} ${i.message}`).join("; ");
    throw new ConfigError(`ACCOUNTS_FILE ${file}: ${issues}`);
  }
  const seen = new Set<string>();
  return parsed.data.accounts.map((a, i) => {
    if (seen.has(a.name)) throw new ConfigError(`ACCOUNTS_FILE ${file}: accounts.${i}.name "${a.name}" appears twice`);
    seen.add(a.name);
    const secret = (field: "apiKeyEnv" | "apiSecretEnv" | "passphraseEnv") => {
      const value = env[a[field]];
      if (!value)
        throw new ConfigError(
          `ACCOUNTS_FILE ${file}: account "${a.name}": environment variable ${a[field]} (${field}) is not set`,
        );
      return value;
    };
    let backfillFromMs = config.backfillFromMs;
    if (a.backfillFrom !== undefined) {
      const ms = parseInstant(String(a.backfillFrom));
      if (ms === undefined)
        throw new ConfigError(
          `ACCOUNTS_FILE ${file}: accounts.${i}.backfillFrom must be an ISO date or epoch milliseconds`,
        );
      backfillFromMs = ms;
    }
    return {
      name: a.name,
      coinIds: [...new Set(a.coinIds)],
      backfillFromMs,
      credentials: {
        apiKey: secret("apiKeyEnv"),
        apiSecret: secret("apiSecretEnv"),
        passphrase: secret("passphraseEnv"),
      },
      billsSource: a.billsSource ?? config.billsSource,
      origin: "file",
    };
  });
}
