// @module-tag redis
// Issue 7, part 5: bad configuration and command lines. Every variable of src/config/env-schema.ts
// and the flags and arguments of every command, each given one bad value, through the real
// executable: exactly one line on stderr naming what is wrong, exit code 2 (usage), nothing on
// stdout, and no work started: no request reaches the exchange, the database stays empty (no
// migration, no table), no Redis key is written.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/exit-codes.ts";
import { loadAccounts } from "../../src/config/accounts.ts";
import { envSchema } from "../../src/config/env-schema.ts";
import { ConfigError, loadConfig } from "../../src/config/index.ts";
import { runCli, type CliResult } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

interface Case {
  /** What is wrong, for the test name. */
  what: string;
  args: string[];
  /** Variables changed from the valid base (undefined removes one). */
  env?: Record<string, string | undefined>;
  /** The one line must match this (it names the variable or flag). */
  says: RegExp;
  /** Variables this case covers (the coverage check wants every schema variable). */
  covers?: string;
  /** Run against the migrated database instead of the empty one. */
  migrated?: boolean;
  /** A value that must not be echoed (secrets). */
  secret?: string;
}

const dir = mkdtempSync(join(tmpdir(), "ls-config-cli-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const ACCOUNT = (name: string, extra = "") =>
  `  - name: ${name}\n    apiKeyEnv: K1\n    apiSecretEnv: S1\n    passphraseEnv: P1\n${extra}`;

const SYNC = ["sync", "--once"];
const WORKER = ["worker"];
const BACKFILL = ["backfill", "--from", "2026-01-01", "--to", "2026-01-02", "--inline"];

/**
 * One bad value per variable, each under a command that would otherwise start work with it (a
 * process start costs about a second of CPU: more bad values per variable are checked in-process
 * below, through the same loadConfig the command calls first).
 */
const VARIABLES: Case[] = [
  {
    what: "DATABASE_URL with a port that is not a number",
    covers: "DATABASE_URL",
    args: ["migrate"],
    env: { DATABASE_URL: "postgresql://u:hunter2@db:port/ledger" },
    says: /DATABASE_URL is not a URL/,
    secret: "hunter2",
  },
  {
    what: "REDIS_URL with a port that is not a number",
    covers: "REDIS_URL",
    args: WORKER,
    env: { REDIS_URL: "redis://127.0.0.1:port" },
    says: /REDIS_URL is not a URL/,
  },
  {
    what: "EXCHANGE_BASE_URL plain http to a remote host",
    covers: "EXCHANGE_BASE_URL",
    args: SYNC,
    env: { EXCHANGE_BASE_URL: "http://api-contract.weex.com" },
    says: /EXCHANGE_BASE_URL must use https \(plain http is allowed only to loopback\)/,
  },
  {
    what: "EXCHANGE_API_KEY with spaces around it",
    covers: "EXCHANGE_API_KEY",
    args: SYNC,
    env: { EXCHANGE_API_KEY: " key-with-spaces " },
    says: /EXCHANGE_API_KEY must not have white space around it/,
    secret: "key-with-spaces",
  },
  {
    what: "EXCHANGE_API_SECRET with a trailing newline",
    covers: "EXCHANGE_API_SECRET",
    args: SYNC,
    env: { EXCHANGE_API_SECRET: "s3cret-value\n" },
    says: /EXCHANGE_API_SECRET must not have white space around it/,
    secret: "s3cret-value",
  },
  {
    what: "EXCHANGE_API_PASSPHRASE with a control character",
    covers: "EXCHANGE_API_PASSPHRASE",
    args: ["snapshot", "--once"],
    env: { EXCHANGE_API_PASSPHRASE: "pass\u0007phrase" },
    says: /EXCHANGE_API_PASSPHRASE must not have white space around it or control characters/,
    secret: "phrase",
  },
  {
    what: "EXCHANGE_LOCALE not a locale",
    covers: "EXCHANGE_LOCALE",
    args: SYNC,
    env: { EXCHANGE_LOCALE: "english please" },
    says: /EXCHANGE_LOCALE must be a locale such as en-US/,
  },
  {
    what: "ACCOUNT_NAME with a space",
    covers: "ACCOUNT_NAME",
    args: SYNC,
    env: { ACCOUNT_NAME: "my account" },
    says: /ACCOUNT_NAME must be 1-64 letters/,
  },
  {
    what: "SYNC_COIN_IDS with a coin name",
    covers: "SYNC_COIN_IDS",
    args: ["snapshot", "--once"],
    env: { SYNC_COIN_IDS: "2,usdt" },
    says: /SYNC_COIN_IDS must be a comma-separated list of numeric coin ids \(bad entry: "usdt"\)/,
  },
  {
    what: "COIN_NAMES name before id",
    covers: "COIN_NAMES",
    args: ["verify"],
    env: { COIN_NAMES: "USDT=2" },
    says: /COIN_NAMES must be a comma-separated list of coinId=NAME pairs such as 2=USDT,1=USDC \(bad entry: "USDT=2"\)/,
  },
  {
    what: "BACKFILL_FROM a day that does not exist",
    covers: "BACKFILL_FROM",
    args: SYNC,
    env: { BACKFILL_FROM: "2026-02-30" },
    says: /BACKFILL_FROM must be an ISO date/,
  },
  {
    what: "SYNC_LOOKBACK_MS negative",
    covers: "SYNC_LOOKBACK_MS",
    args: SYNC,
    env: { SYNC_LOOKBACK_MS: "-5" },
    says: /SYNC_LOOKBACK_MS must be a whole number/,
  },
  {
    what: "SYNC_RESWEEP_HOURS in days",
    covers: "SYNC_RESWEEP_HOURS",
    args: WORKER,
    env: { SYNC_RESWEEP_HOURS: "2d" },
    says: /SYNC_RESWEEP_HOURS must be a whole number/,
  },
  {
    what: "RATE_LIMIT_IP_WEIGHT zero",
    covers: "RATE_LIMIT_IP_WEIGHT",
    args: WORKER,
    env: { RATE_LIMIT_IP_WEIGHT: "0" },
    says: /RATE_LIMIT_IP_WEIGHT must be a positive whole number/,
  },
  {
    what: "RATE_LIMIT_UID_WEIGHT in exponent notation",
    covers: "RATE_LIMIT_UID_WEIGHT",
    args: BACKFILL,
    env: { RATE_LIMIT_UID_WEIGHT: "1e3" },
    says: /RATE_LIMIT_UID_WEIGHT must be a whole number/,
  },
  {
    what: "RATE_LIMIT_WINDOW_MS a word",
    covers: "RATE_LIMIT_WINDOW_MS",
    args: SYNC,
    env: { RATE_LIMIT_WINDOW_MS: "ten" },
    says: /RATE_LIMIT_WINDOW_MS must be a whole number/,
  },
  {
    what: "SNAPSHOT_HISTORY_RETENTION_DAYS zero",
    covers: "SNAPSHOT_HISTORY_RETENTION_DAYS",
    args: ["snapshot", "--once"],
    env: { SNAPSHOT_HISTORY_RETENTION_DAYS: "0" },
    says: /SNAPSHOT_HISTORY_RETENTION_DAYS must be a whole number of days/,
  },
  {
    what: "SNAPSHOT_HISTORY_RETENTION_DAYS below SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS (the default, 1827)",
    covers: "SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS",
    args: WORKER,
    env: { SNAPSHOT_HISTORY_RETENTION_DAYS: "1826" },
    says: /SNAPSHOT_HISTORY_RETENTION_DAYS=1826 is below SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS=1827: /,
  },
  {
    what: "ANCHOR_DIR that does not exist",
    covers: "ANCHOR_DIR",
    args: ["verify", "--no-exchange"],
    env: { ANCHOR_DIR: join(dir, "no-anchors") },
    says: /ANCHOR_DIR .*no-anchors does not exist/,
  },
  {
    what: "ANCHOR_TSA_URL not http(s)",
    covers: "ANCHOR_TSA_URL",
    args: ["verify", "--no-exchange"],
    env: { ANCHOR_TSA_URL: "ftp://tsa.example/" },
    says: /ANCHOR_TSA_URL must be an http:\/\/ or https:\/\/ URL/,
  },
  {
    what: "ACCOUNTS_FILE that does not exist",
    covers: "ACCOUNTS_FILE",
    args: WORKER,
    env: { ACCOUNTS_FILE: join(dir, "missing.yaml") },
    says: /ACCOUNTS_FILE .*missing\.yaml cannot be read/,
  },
  {
    what: "BILLS_INTERVAL_MS zero",
    covers: "BILLS_INTERVAL_MS",
    args: WORKER,
    env: { BILLS_INTERVAL_MS: "0" },
    says: /BILLS_INTERVAL_MS must be a positive whole number/,
  },
  {
    what: "SNAPSHOT_INTERVAL_MS fractional",
    covers: "SNAPSHOT_INTERVAL_MS",
    args: WORKER,
    env: { SNAPSHOT_INTERVAL_MS: "1.5" },
    says: /SNAPSHOT_INTERVAL_MS must be a whole number/,
  },
  {
    what: "SHUTDOWN_TIMEOUT_MS negative",
    covers: "SHUTDOWN_TIMEOUT_MS",
    args: WORKER,
    env: { SHUTDOWN_TIMEOUT_MS: "-1" },
    says: /SHUTDOWN_TIMEOUT_MS must be a whole number/,
  },
  {
    what: "METRICS_PORT past 65535",
    covers: "METRICS_PORT",
    args: WORKER,
    env: { METRICS_PORT: "70000" },
    says: /METRICS_PORT must be a port number \(0-65535\)/,
  },
  {
    what: "HEALTH_MAX_SYNC_AGE_MS a word",
    covers: "HEALTH_MAX_SYNC_AGE_MS",
    args: WORKER,
    env: { HEALTH_MAX_SYNC_AGE_MS: "soon" },
    says: /HEALTH_MAX_SYNC_AGE_MS must be a whole number/,
  },
  {
    what: "JOB_LOCK_DURATION_MS past 2^53",
    covers: "JOB_LOCK_DURATION_MS",
    args: WORKER,
    env: { JOB_LOCK_DURATION_MS: "99999999999999999999" },
    says: /JOB_LOCK_DURATION_MS is too large/,
  },
  {
    what: "BULL_BOARD_ENABLED neither true nor false",
    covers: "BULL_BOARD_ENABLED",
    args: WORKER,
    env: { BULL_BOARD_ENABLED: "maybe" },
    says: /BULL_BOARD_ENABLED must be true or false/,
  },
  {
    what: "CONSOLE_ENABLED neither true nor false",
    covers: "CONSOLE_ENABLED",
    args: WORKER,
    env: { CONSOLE_ENABLED: "maybe" },
    says: /CONSOLE_ENABLED must be true or false/,
  },
  {
    what: "CONSOLE_TOKEN too short to be safe",
    covers: "CONSOLE_TOKEN",
    args: ["console"],
    env: { CONSOLE_TOKEN: "s3cr3t-tok" },
    says: /CONSOLE_TOKEN must be 16-512 characters/,
    secret: "s3cr3t-tok",
  },
  {
    what: "CONSOLE_HOST with a space",
    covers: "CONSOLE_HOST",
    args: ["console"],
    env: { CONSOLE_HOST: "my host" },
    says: /CONSOLE_HOST must be a host name or an IP address/,
  },
  {
    what: "CONSOLE_PORT past 65535",
    covers: "CONSOLE_PORT",
    args: ["console"],
    env: { CONSOLE_PORT: "70000" },
    says: /CONSOLE_PORT must be a port number \(0-65535\)/,
  },
  {
    what: "QUEUE_PREFIX with a space",
    covers: "QUEUE_PREFIX",
    args: WORKER,
    env: { QUEUE_PREFIX: "ledger sync" },
    says: /QUEUE_PREFIX must be 1-64 letters/,
  },
  {
    what: "LEDGER_SYNC_MASTER_KEY of 31 bytes",
    covers: "LEDGER_SYNC_MASTER_KEY",
    args: WORKER,
    env: { LEDGER_SYNC_MASTER_KEY: "ab".repeat(31) },
    says: /LEDGER_SYNC_MASTER_KEY must be 32 bytes, as 64 hex digits or base64; it is hex decoding to 31 bytes/,
    secret: "ab".repeat(31),
  },
  {
    what: "LEDGER_SYNC_MASTER_KEY_FILE that does not exist",
    covers: "LEDGER_SYNC_MASTER_KEY_FILE",
    args: WORKER,
    env: { LEDGER_SYNC_MASTER_KEY_FILE: join(dir, "no-key") },
    says: /LEDGER_SYNC_MASTER_KEY_FILE \(.*no-key\)/,
  },
  {
    what: "LEDGER_SYNC_NEW_MASTER_KEY not hex nor base64",
    covers: "LEDGER_SYNC_NEW_MASTER_KEY",
    args: ["accounts", "rekey"],
    env: { LEDGER_SYNC_NEW_MASTER_KEY: "not a key!" },
    says: /LEDGER_SYNC_NEW_MASTER_KEY must be 32 bytes/,
  },
  {
    what: "LEDGER_SYNC_NEW_MASTER_KEY_FILE and the variable both set",
    covers: "LEDGER_SYNC_NEW_MASTER_KEY_FILE",
    args: ["accounts", "rekey"],
    env: { LEDGER_SYNC_NEW_MASTER_KEY: "ab".repeat(32), LEDGER_SYNC_NEW_MASTER_KEY_FILE: join(dir, "no-key") },
    says: /LEDGER_SYNC_NEW_MASTER_KEY and LEDGER_SYNC_NEW_MASTER_KEY_FILE are both set/,
  },
  {
    what: "DATABASE_POOL_MAX of one",
    covers: "DATABASE_POOL_MAX",
    args: WORKER,
    env: { DATABASE_POOL_MAX: "1" },
    says: /DATABASE_POOL_MAX must be at least 2/,
  },
  {
    what: "RUN_LEASE_MS under three seconds",
    covers: "RUN_LEASE_MS",
    args: SYNC,
    env: { RUN_LEASE_MS: "1000" },
    says: /RUN_LEASE_MS must be at least 3000/,
  },
  {
    what: "REDIS_TLS_CA_FILE with a redis:// URL",
    covers: "REDIS_TLS_CA_FILE",
    args: WORKER,
    env: { REDIS_URL: "redis://127.0.0.1:6379", REDIS_TLS_CA_FILE: join(dir, "no-ca.pem") },
    says: /REDIS_TLS_CA_FILE is set but REDIS_URL is redis:\/\/ \(no TLS\)/,
  },
  {
    what: "REDIS_ACCEPT_EVICTION_POLICY not a policy name",
    covers: "REDIS_ACCEPT_EVICTION_POLICY",
    args: WORKER,
    env: { REDIS_ACCEPT_EVICTION_POLICY: "Evict Anything" },
    says: /REDIS_ACCEPT_EVICTION_POLICY must be the name of a maxmemory-policy/,
  },
  {
    what: "REDIS_SENTINELS without a port",
    covers: "REDIS_SENTINELS",
    args: WORKER,
    env: { REDIS_SENTINELS: "127.0.0.1", REDIS_SENTINEL_NAME: "mymaster" },
    says: /REDIS_SENTINELS .*"127\.0\.0\.1" is not host:port/,
  },
  {
    what: "REDIS_SENTINEL_NAME without REDIS_SENTINELS",
    covers: "REDIS_SENTINEL_NAME",
    args: WORKER,
    env: { REDIS_SENTINEL_NAME: "mymaster" },
    says: /REDIS_SENTINEL_NAME is set without REDIS_SENTINELS/,
  },
  {
    what: "REDIS_SENTINEL_PASSWORD without REDIS_SENTINELS",
    covers: "REDIS_SENTINEL_PASSWORD",
    args: WORKER,
    env: { REDIS_SENTINEL_PASSWORD: "hunter2" },
    says: /REDIS_SENTINEL_PASSWORD is set without REDIS_SENTINELS/,
    secret: "hunter2",
  },
  {
    what: "REDIS_CLUSTER on with a prefix without a hash tag",
    covers: "REDIS_CLUSTER",
    args: WORKER,
    env: { REDIS_CLUSTER: "on", QUEUE_PREFIX: "ledger-sync" },
    says: /QUEUE_PREFIX=\{ls\}/,
  },
  {
    what: "WORKER_CONCURRENCY zero",
    covers: "WORKER_CONCURRENCY",
    args: WORKER,
    env: { WORKER_CONCURRENCY: "0" },
    says: /WORKER_CONCURRENCY must be a positive whole number/,
  },
  {
    what: "ACCOUNTS_REFRESH_MS over 10 s",
    covers: "ACCOUNTS_REFRESH_MS",
    args: WORKER,
    env: { ACCOUNTS_REFRESH_MS: "60000" },
    says: /ACCOUNTS_REFRESH_MS must be at most 10000/,
  },
  {
    what: "SCHEDULER_TICK_MS below 50",
    covers: "SCHEDULER_TICK_MS",
    args: WORKER,
    env: { SCHEDULER_TICK_MS: "5" },
    says: /SCHEDULER_TICK_MS must be at least 50/,
  },
  {
    what: "EGRESS_LOCAL_ADDRESS a host name",
    covers: "EGRESS_LOCAL_ADDRESS",
    args: WORKER,
    env: { EGRESS_LOCAL_ADDRESS: "egress-a" },
    says: /EGRESS_LOCAL_ADDRESS must be an IP address of this host/,
  },
  {
    what: "BACKFILL_IP_SHARE over 1",
    covers: "BACKFILL_IP_SHARE",
    args: WORKER,
    env: { BACKFILL_IP_SHARE: "1.5" },
    says: /BACKFILL_IP_SHARE must be a fraction from 0 to 1/,
  },
  {
    what: "RATE_LIMIT_IP_HEADROOM of the whole budget",
    covers: "RATE_LIMIT_IP_HEADROOM",
    args: WORKER,
    env: { RATE_LIMIT_IP_HEADROOM: "1" },
    says: /RATE_LIMIT_IP_HEADROOM must be a fraction from 0 to 0.9/,
  },
  {
    what: "EGRESS_ID with a tab",
    covers: "EGRESS_ID",
    args: WORKER,
    env: { EGRESS_ID: "office\tA" },
    says: /EGRESS_ID must be 1-128 printable characters without spaces/,
  },
  {
    what: "EXCHANGE_TIMEOUT_MS zero",
    covers: "EXCHANGE_TIMEOUT_MS",
    args: SYNC,
    env: { EXCHANGE_TIMEOUT_MS: "0" },
    says: /EXCHANGE_TIMEOUT_MS must be a positive whole number/,
  },
  {
    what: "EXCHANGE_MAX_ATTEMPTS a word",
    covers: "EXCHANGE_MAX_ATTEMPTS",
    args: SYNC,
    env: { EXCHANGE_MAX_ATTEMPTS: "many" },
    says: /EXCHANGE_MAX_ATTEMPTS must be a whole number/,
  },
  {
    what: "CROSS_CHECK_INTERVAL_MS a word",
    covers: "CROSS_CHECK_INTERVAL_MS",
    args: SYNC,
    env: { CROSS_CHECK_INTERVAL_MS: "hourly" },
    says: /CROSS_CHECK_INTERVAL_MS must be a whole number/,
  },
  {
    what: "BILLS_SOURCE unknown",
    covers: "BILLS_SOURCE",
    args: SYNC,
    env: { BILLS_SOURCE: "v1" },
    says: /BILLS_SOURCE must be one of v2, v3/,
  },
  {
    what: "EXCHANGE_MAX_WAIT_MS zero",
    covers: "EXCHANGE_MAX_WAIT_MS",
    args: SYNC,
    env: { EXCHANGE_MAX_WAIT_MS: "0" },
    says: /EXCHANGE_MAX_WAIT_MS must be a positive whole number/,
  },
  {
    what: "EXCHANGE_MAX_SPAN_MS in days",
    covers: "EXCHANGE_MAX_SPAN_MS",
    args: SYNC,
    env: { EXCHANGE_MAX_SPAN_MS: "2d" },
    says: /EXCHANGE_MAX_SPAN_MS must be a whole number of milliseconds/,
  },
  {
    what: "EXCHANGE_HISTORY_DAYS negative",
    covers: "EXCHANGE_HISTORY_DAYS",
    args: BACKFILL,
    env: { EXCHANGE_HISTORY_DAYS: "-90" },
    says: /EXCHANGE_HISTORY_DAYS must be a number of days/,
  },
  {
    what: "LOG_LEVEL unknown",
    covers: "LOG_LEVEL",
    args: ["migrate"],
    env: { LOG_LEVEL: "loud" },
    says: /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/,
  },
  {
    what: "LOG_FORMAT unknown",
    covers: "LOG_FORMAT",
    args: ["migrate"],
    env: { LOG_FORMAT: "xml" },
    says: /LOG_FORMAT must be one of json, pretty/,
  },
];

/** Required variables left out, and a file that ACCOUNTS_FILE names with bad content (more such files in-process below). */
const MISSING_AND_FILES: Case[] = [
  {
    what: "no exchange credentials for sync",
    args: SYNC,
    env: { EXCHANGE_API_KEY: undefined, EXCHANGE_API_PASSPHRASE: undefined },
    says: /EXCHANGE_API_KEY, EXCHANGE_API_PASSPHRASE are required to call the exchange/,
  },
  { what: "no REDIS_URL for the worker", args: WORKER, env: { REDIS_URL: undefined }, says: /REDIS_URL is required/ },
  {
    what: "a worker console without CONSOLE_TOKEN (the ops port listens on every interface)",
    args: WORKER,
    env: { CONSOLE_ENABLED: "true" },
    says: /CONSOLE_TOKEN is required: the console would listen on 0\.0\.0\.0, which is not loopback/,
  },
  {
    what: "an ACCOUNTS_FILE naming an unset variable",
    args: WORKER,
    env: { ACCOUNTS_FILE: file("unset.yaml", `accounts:\n${ACCOUNT("main").replace("S1", "NOT_SET_ANYWHERE")}`) },
    says: /ACCOUNTS_FILE .*account "main": environment variable NOT_SET_ANYWHERE \(apiSecretEnv\) is not set/,
  },
];

/** Flags and arguments of every command. */
const FLAGS: Case[] = [
  { what: "an unknown command", args: ["frobnicate"], says: /unknown command 'frobnicate'/ },
  {
    what: "migrate: an unknown flag",
    args: ["migrate", "--force"],
    says: /unknown option '--force'.*ledger-sync migrate --help/,
  },
  { what: "sync: an unknown flag", args: ["sync", "--once", "--bogus"], says: /unknown option '--bogus'/ },
  { what: "snapshot: without --once", args: ["snapshot"], says: /snapshot needs --once/ },
  { what: "worker: an extra argument", args: ["worker", "now"], says: /too many arguments for 'worker'/ },
  {
    what: "backfill: no --from",
    args: ["backfill", "--inline"],
    says: /required option '--from <date\|ms>' not specified/,
  },
  {
    what: "backfill: --to a day that does not exist",
    args: ["backfill", "--from", "2026-01-01", "--to", "2026-02-29"],
    says: /--to must be an ISO date/,
  },
  {
    what: "backfill: --to before --from",
    args: ["backfill", "--from", "2026-01-02", "--to", "2026-01-01", "--inline"],
    says: /--to is before --from/,
  },
  {
    what: "backfill: --account not configured",
    args: [...BACKFILL, "--account", "nobody"],
    says: /--account nobody is not a configured account/,
  },
  { what: "verify: --from a word", args: ["verify", "--from", "soon"], says: /--from must be an ISO date/ },
  {
    what: "verify: --to before --from",
    args: ["verify", "--from", "2026-02-01", "--to", "2026-01-01"],
    says: /--to is before --from/,
  },
  {
    what: "verify: --account with no bills",
    args: ["verify", "--account", "nobody"],
    says: /--account nobody: no bills or closes are stored for that account/,
    migrated: true,
  },
  { what: "status: an unknown flag", args: ["status", "--all"], says: /unknown option '--all'/ },
  {
    what: "grant-readonly: a role name that is not an identifier",
    args: ["grant-readonly", "Robert'); DROP TABLE bills;--"],
    says: /role name .* must be 1-63 lower-case letters/,
  },
  {
    what: "sandbox: --port past 65535",
    args: ["sandbox", "--port", "70000"],
    says: /--port must be a port number from 0 to 65535/,
  },
  {
    what: "sandbox: --page-cap past 100",
    args: ["sandbox", "--page-cap", "101"],
    says: /--page-cap must be a whole number from 1 to 100/,
  },
  {
    what: "sandbox: --max-span in weeks",
    args: ["sandbox", "--max-span", "2w"],
    says: /--max-span must be whole milliseconds or a duration like 36h or 2d/,
  },
  { what: "demo: --bills not a number", args: ["demo", "--bills", "many"], says: /--bills .*must be a whole number/ },
];

/** More bad values, checked through loadConfig / loadAccounts directly: [variable, value, message]. */
const MORE_VALUES: [string, string, RegExp][] = [
  ["DATABASE_URL", "mysql://root@127.0.0.1/ledger", /must start with postgresql:\/\//],
  ["DATABASE_URL", "not a url", /is not a URL/],
  ["REDIS_URL", "127.0.0.1:6379", /must start with redis:\/\//],
  ["REDIS_URL", "redis:///0", /has no host/],
  ["EXCHANGE_BASE_URL", "api-contract.weex.com", /is not a URL/],
  ["EXCHANGE_BASE_URL", "ftp://api-contract.weex.com", /must be an https:\/\/ URL/],
  ["EXCHANGE_BASE_URL", "http://10.0.0.5:8787", /must use https/],
  ["EXCHANGE_BASE_URL", "http://127.0.0.1.nip.io", /must use https/],
  ["EXCHANGE_BASE_URL", "https://user:pw@api-contract.weex.com", /must not carry a query, fragment or credentials/],
  ["EXCHANGE_BASE_URL", "https://api-contract.weex.com/?x=1", /must not carry a query/],
  ["EXCHANGE_API_KEY", "key\n", /must not have white space around it/],
  ["EXCHANGE_API_SECRET", "\tsecret", /must not have white space around it/],
  ["EXCHANGE_API_PASSPHRASE", "pass\u0000", /control characters/],
  ["EXCHANGE_LOCALE", "e", /must be a locale/],
  ["ACCOUNT_NAME", "-leading-dash", /ACCOUNT_NAME must be/],
  ["ACCOUNT_NAME", "x".repeat(65), /ACCOUNT_NAME must be/],
  ["SYNC_COIN_IDS", "2,,3", /bad entry: ""/],
  ["SYNC_COIN_IDS", "-2", /bad entry: "-2"/],
  ["COIN_NAMES", "2=USDT,2=USDC", /COIN_NAMES names coin id 2 twice/],
  ["COIN_NAMES", "2=", /bad entry: "2="/],
  ["BACKFILL_FROM", "yesterday", /must be an ISO date/],
  ["BACKFILL_FROM", "2026-02-29", /must be an ISO date/],
  ["BACKFILL_FROM", "2026-04-31", /must be an ISO date/],
  ["BACKFILL_FROM", "2026-01-01T24:00:00Z", /must be an ISO date/],
  ["BACKFILL_FROM", "2026-01-01T12:60", /must be an ISO date/],
  ["BACKFILL_FROM", "99999999999999999", /must be an ISO date/],
  ["SYNC_LOOKBACK_MS", "1e3", /must be a whole number/],
  ["RATE_LIMIT_IP_WEIGHT", "-1", /must be a whole number/],
  ["RATE_LIMIT_UID_WEIGHT", "0", /must be a positive whole number/],
  ["RATE_LIMIT_WINDOW_MS", "0x10", /must be a whole number/],
  ["SNAPSHOT_HISTORY_RETENTION_DAYS", "never", /must be a whole number of days/],
  ["SNAPSHOT_HISTORY_RETENTION_DAYS", "1000001", /must be a whole number of days/],
  ["SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS", "5y", /must be a whole number/],
  ["SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS", "0", /must be a positive whole number/],
  ["BILLS_INTERVAL_MS", "60s", /must be a whole number/],
  ["METRICS_PORT", "-1", /must be a port number/],
  ["METRICS_PORT", "http", /must be a port number/],
  ["BULL_BOARD_ENABLED", "yes", /must be true or false/],
  ["QUEUE_PREFIX", "x".repeat(65), /QUEUE_PREFIX must be/],
  ["QUEUE_PREFIX", "a:b", /QUEUE_PREFIX must be/],
  ["EGRESS_ID", "x".repeat(129), /EGRESS_ID must be/],
  ["EXCHANGE_MAX_ATTEMPTS", "0", /must be a positive whole number/],
  ["EXCHANGE_MAX_WAIT_MS", "15m", /must be a whole number/],
  ["BILLS_SOURCE", "v4", /must be one of v2, v3/],
  ["CROSS_CHECK_INTERVAL_MS", "1000", /must be 0 \(off\) or at least 60000/],
  ["SYNC_RESWEEP_HOURS", "9000", /must be at most 8784 hours/],
  ["EXCHANGE_MAX_SPAN_MS", "2", /must be at least 3/],
  ["EXCHANGE_MAX_SPAN_MS", "2d", /must be a whole number of milliseconds/],
  ["EXCHANGE_HISTORY_DAYS", "ninety", /must be a number of days/],
  ["EXCHANGE_HISTORY_DAYS", "0", /must be more than 0/],
  ["LOG_LEVEL", "verbose", /must be one of/],
  ["LOG_FORMAT", "yaml", /must be one of/],
];

let empty: TestDatabase;
let migrated: MigratedDb;
let redis: TestRedis;
let exchange: Server;
let exchangeUrl: string;
const exchangeRequests: string[] = [];
const results = new Map<Case, CliResult>();

/** Valid configuration for every command; each case spoils one thing. */
function baseEnv(c: Case): Record<string, string | undefined> {
  return {
    DATABASE_URL: (c.migrated ? migrated : empty).url,
    REDIS_URL: redis.url,
    QUEUE_PREFIX: redis.prefix,
    EXCHANGE_BASE_URL: exchangeUrl,
    EXCHANGE_API_KEY: "test-key",
    EXCHANGE_API_SECRET: "test-secret",
    EXCHANGE_API_PASSPHRASE: "test-passphrase",
    K1: "k",
    S1: "s",
    P1: "p",
    SYNC_COIN_IDS: "2",
    METRICS_PORT: "0",
    // Any log line would be a second line on stderr.
    LOG_LEVEL: "debug",
    ...c.env,
  };
}

/** Runs the cases a few at a time: each is a process start (about a second of CPU), two cores. */
async function runAll(cases: Case[], parallel: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < cases.length) {
        const c = cases[next++]!;
        const env = baseEnv(c);
        // undefined removes a variable from the base (runCli passes only what is set).
        results.set(
          c,
          await runCli(
            c.args,
            Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>,
            30_000,
          ),
        );
      }
    }),
  );
}

beforeAll(async () => {
  [empty, migrated, redis] = await Promise.all([createTestDatabase(), createMigratedDb(), createTestRedis()]);
  // Anything that reaches "the exchange" is work started: record it.
  exchange = createServer((req, res) => {
    exchangeRequests.push(`${req.method} ${req.url}`);
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => exchange.listen(0, "127.0.0.1", resolve));
  exchangeUrl = `http://127.0.0.1:${(exchange.address() as AddressInfo).port}`;
  await runAll([...VARIABLES, ...MISSING_AND_FILES, ...FLAGS], 2);
});

afterAll(async () => {
  await new Promise<void>((resolve) => exchange?.close(() => resolve()));
  await Promise.all([empty?.drop(), migrated?.close(), redis?.cleanup()]);
});

function expectOneLineRefusal(c: Case): void {
  const r = results.get(c)!;
  expect(r.code, `exit code; stderr: ${r.stderr}`).toBe(EXIT.usage);
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  expect(lines, "exactly one line on stderr").toHaveLength(1);
  expect(lines[0]).toMatch(/^ledger-sync: /);
  expect(lines[0]).toMatch(c.says);
  expect(r.stdout).toBe("");
  if (c.secret) expect(r.stderr).not.toContain(c.secret);
}

describe("bad configuration: every variable", () => {
  it("the table below covers every variable of env-schema.ts", () => {
    expect(new Set(VARIABLES.map((c) => c.covers))).toEqual(new Set(Object.keys(envSchema.shape)));
  });

  it.each(VARIABLES.map((c) => [c.what, c] as const))("%s: one line naming it, exit 2", (_what, c) => {
    expectOneLineRefusal(c);
    expect(results.get(c)!.stderr).toContain(c.covers!);
  });

  it.each(MISSING_AND_FILES.map((c) => [c.what, c] as const))("%s: one line naming it, exit 2", (_what, c) =>
    expectOneLineRefusal(c),
  );
});

describe("bad configuration: more values per variable, in-process", () => {
  it.each(MORE_VALUES)("%s=%j is refused with one line naming it", (name, value, message) => {
    let err: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = (err as Error).message;
    expect(text).not.toContain("\n");
    expect(text).toMatch(new RegExp(`^invalid configuration: ${name} `));
    expect(text).toMatch(message);
    // Values are never echoed: some are secrets.
    if (value.length > 3) expect(text).not.toContain(value);
  });

  it.each([
    [
      "a name listed twice",
      `accounts:\n${ACCOUNT("main")}${ACCOUNT("main")}`,
      /accounts\.1\.name "main" appears twice/,
    ],
    [
      "a backfillFrom that is not a day",
      `accounts:\n${ACCOUNT("main", "    backfillFrom: 2026-02-30\n")}`,
      /accounts\.0\.backfillFrom must be an ISO date/,
    ],
    ["no accounts", "accounts: []\n", /accounts must list at least one account/],
    [
      "an unknown billsSource",
      `accounts:\n${ACCOUNT("main", "    billsSource: v1\n")}`,
      /accounts\.0\.billsSource must be one of v2, v3/,
    ],
    ["text that is not YAML", "accounts: [\n  - name: x\n", /is not valid YAML/],
    [
      "a secret written into it",
      JSON.stringify({
        accounts: [
          { name: "main", apiKeyEnv: "K1", apiSecretEnv: "S1", passphraseEnv: "P1", apiSecret: "inline-secret" },
        ],
      }),
      /accounts\.0 Unrecognized key: "apiSecret"/,
    ],
    [
      "a secret instead of a variable name",
      `accounts:\n${ACCOUNT("main").replace("apiKeyEnv: K1", "apiKeyEnv: sk-live-123")}`,
      /accounts\.0\.apiKeyEnv must be the name of an environment variable/,
    ],
  ])("an ACCOUNTS_FILE with %s is refused with one line naming it", (_what, text, message) => {
    const path = file(`more-${_what.length}.${text.startsWith("{") ? "json" : "yaml"}`, text);
    const config = loadConfig({ ACCOUNTS_FILE: path });
    expect(() => loadAccounts(config, { K1: "k", S1: "s", P1: "p" })).toThrow(ConfigError);
    expect(() => loadAccounts(config, { K1: "k", S1: "s", P1: "p" })).toThrow(message);
    expect(() => loadAccounts(config, { K1: "k", S1: "s", P1: "p" })).not.toThrow(/inline-secret/);
  });
});

describe("BILLS_SOURCE per account", () => {
  it("takes each account's billsSource, and BILLS_SOURCE for the others", () => {
    const path = file("sources.yaml", `accounts:\n${ACCOUNT("main", "    billsSource: v3\n")}${ACCOUNT("hedge")}`);
    const accounts = loadAccounts(loadConfig({ ACCOUNTS_FILE: path, BILLS_SOURCE: "V2" }), {
      K1: "k",
      S1: "s",
      P1: "p",
    });
    expect(accounts.map((a) => [a.name, a.billsSource])).toEqual([
      ["main", "v3"],
      ["hedge", "v2"],
    ]);
    expect(loadConfig({}).billsSource).toBe("v2");
  });
});

describe("bad command lines: every command", () => {
  it.each(FLAGS.map((c) => [c.what, c] as const))("%s: one line naming it, exit 2", (_what, c) =>
    expectOneLineRefusal(c),
  );
});

describe("nothing was started by any of them", () => {
  it("no request reached the exchange", () => {
    expect(exchangeRequests).toEqual([]);
  });

  it("the database is untouched: no migration, no table", async () => {
    const client = new pg.Client({ connectionString: empty.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
      );
      expect(rows[0]!.n).toBe(0);
    } finally {
      await client.end();
    }
    const counts = await migrated.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT (SELECT count(*) FROM bills) + (SELECT count(*) FROM sync_state) + (SELECT count(*) FROM quarantine) AS n",
    );
    expect(Number(counts[0]!.n)).toBe(0);
  });

  it("no Redis key was written", async () => {
    expect(await redis.client.keys(`${redis.prefix}*`)).toEqual([]);
  });
});
