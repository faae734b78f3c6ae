// What each environment variable of env-schema.ts means, its default as a user sees it, and which
// commands read it: the one source of docs/configuration.md (`npm run docs`). Keyed by the schema's
// own names, so a variable without an entry, or an entry without a variable, fails the type check.
// See docs/design/reference-docs.md.
import type { envSchema } from "./env-schema.ts";

export type EnvName = keyof typeof envSchema.shape;

/** The commands that read configuration, in the order `ledger-sync --help` lists them. */
export const READER_COMMANDS = [
  "migrate",
  "sync",
  "snapshot",
  "worker",
  "accounts",
  "accounts add",
  "accounts rotate",
  "accounts import",
  "accounts rekey",
  "backfill",
  "status",
  "verify",
  "statement",
  "close",
  "audit-report",
  "anchors export",
  "console",
  "demo",
] as const;
export type ReaderCommand = (typeof READER_COMMANDS)[number];

export interface EnvDoc {
  /** Markdown, one line. */
  meaning: string;
  /** As the user sees it: a literal in backticks, or words in parentheses when unset means none. */
  default: string;
  /** The commands that use the value ("every command": all but `sandbox`, which reads none). */
  readBy: "every command" | readonly ReaderCommand[];
}

/** Text of docs/configuration.md above the table. */
export const CONFIGURATION_INTRO = [
  "All configuration comes from environment variables. Every variable is checked at start. An invalid",
  "value stops the command, before any work, with one line that names the variable (exit code 2).",
  "",
  'Every command but `sandbox` checks every variable, also those it does not read; "Read by" lists the',
  "commands that use each. `demo` runs the worker (or, without Redis, syncs inline) and reads what it",
  "reads, with its own `BACKFILL_FROM` and `METRICS_PORT`, and `BILLS_INTERVAL_MS`, `SNAPSHOT_INTERVAL_MS`",
  "and `QUEUE_PREFIX` unless they are set; against its sandbox exchange (no credentials set) it also sets",
  "the exchange's URL and keys, and `SYNC_COIN_IDS` and `COIN_NAMES` unless they are set.",
].join("\n");

/** The commands that call the exchange: its client settings and the weight budgets apply to each. */
const CALLS_EXCHANGE: readonly ReaderCommand[] = [
  "sync",
  "snapshot",
  "worker",
  "accounts add",
  "accounts rotate",
  "accounts import",
  "backfill",
  "verify",
];
/** The commands that work on the configured accounts (plain variables, ACCOUNTS_FILE, accounts table). */
const LOADS_ACCOUNTS: readonly ReaderCommand[] = ["sync", "snapshot", "worker", "backfill", "verify"];
/** The commands that check a new account's name against the configured ones, and prove its key. */
const REGISTERS: readonly ReaderCommand[] = ["accounts add", "accounts import"];
const PROVES_KEY: readonly ReaderCommand[] = ["accounts add", "accounts rotate", "accounts import"];
/** The commands that write a log. */
const LOGS: readonly ReaderCommand[] = [
  "migrate",
  "sync",
  "snapshot",
  "worker",
  "accounts",
  "backfill",
  "verify",
  "console",
  "demo",
];

export const ENV_DOCS: Record<EnvName, EnvDoc> = {
  DATABASE_URL: {
    default: "(required; `demo` starts its own when unset)",
    meaning: "PostgreSQL URL, `postgresql://user:password@host:port/database`",
    readBy: "every command",
  },
  REDIS_URL: {
    default: "(required for `worker` and queued `backfill`)",
    meaning:
      "Redis URL, `redis://host:port` (`rediss://` for TLS). A command that calls the exchange shares the weight " +
      "budgets kept there when it answers. Its `maxmemory-policy` must be `noeviction`",
    readBy: [...CALLS_EXCHANGE, "status", "demo"],
  },
  REDIS_TLS_CA_FILE: {
    default: "(Node's default CAs)",
    meaning:
      "With a `rediss://` REDIS_URL: the PEM file of the CA(s) the server's certificate must verify against " +
      "(a managed Redis's or your own CA). The certificate is always verified; set with a `redis://` URL it is " +
      "refused. See [Redis as rented](design/redis-as-rented.md)",
    readBy: [...CALLS_EXCHANGE, "status", "demo"],
  },
  REDIS_ACCEPT_EVICTION_POLICY: {
    default: "(unset: any `maxmemory-policy` but `noeviction` is refused at start)",
    meaning:
      "Runs on a Redis whose `maxmemory-policy` is this one (e.g. `volatile-lru`), or `unknown` where it " +
      "cannot be read, with a warning instead of refusing: an evicted key is a lost job, job lock or weight " +
      "budget window. Set `noeviction` instead where you can. See [Redis as rented](design/redis-as-rented.md)",
    readBy: [...CALLS_EXCHANGE, "demo"],
  },
  REDIS_SENTINELS: {
    default: "(unset: REDIS_URL names the server)",
    meaning:
      "Redis Sentinel: the sentinels, `host:port,host:port`; the master is asked of them and followed after a " +
      "failover. Needs REDIS_SENTINEL_NAME. REDIS_URL still gives the data nodes' password, user, db and TLS " +
      "(`rediss://`); its host:port is then ignored. See [Redis as rented](design/redis-as-rented.md)",
    readBy: [...CALLS_EXCHANGE, "status", "demo"],
  },
  REDIS_SENTINEL_NAME: {
    default: "(unset; required with REDIS_SENTINELS)",
    meaning: "Redis Sentinel: the master group's name, as in the sentinels' `sentinel monitor <name> ...`",
    readBy: [...CALLS_EXCHANGE, "status", "demo"],
  },
  REDIS_SENTINEL_PASSWORD: {
    default: "(unset: the sentinels ask for none)",
    meaning: "Redis Sentinel: the password the sentinels require (`requirepass` of the sentinels)",
    readBy: [...CALLS_EXCHANGE, "status", "demo"],
  },
  REDIS_CLUSTER: {
    default: "`off`",
    meaning:
      "`on`: REDIS_URL names one node of a Redis Cluster (cluster mode enabled). QUEUE_PREFIX must then hold a " +
      "hash tag, e.g. `{ls}`, so that every key of one script or transaction is in one slot (else `CROSSSLOT`); " +
      "one without is refused. A cluster named without it is refused at start. " +
      "See [Redis as rented](design/redis-as-rented.md)",
    readBy: [...CALLS_EXCHANGE, "status", "demo"],
  },
  EXCHANGE_BASE_URL: {
    default: "`https://api-contract.weex.com`",
    meaning: "Exchange API origin. Plain `http://` is refused except to loopback (the sandbox)",
    readBy: CALLS_EXCHANGE,
  },
  EXCHANGE_API_KEY: {
    default: "(required for `sync`)",
    meaning:
      "API key (ACCESS-KEY). The three credentials are refused at start if they have white space around them " +
      "or a control character in them",
    readBy: LOADS_ACCOUNTS,
  },
  EXCHANGE_API_SECRET: {
    default: "(required for `sync`)",
    meaning: "API secret used to sign requests (never logged)",
    readBy: LOADS_ACCOUNTS,
  },
  EXCHANGE_API_PASSPHRASE: {
    default: "(required for `sync`)",
    meaning: "API passphrase (ACCESS-PASSPHRASE; never logged)",
    readBy: LOADS_ACCOUNTS,
  },
  EXCHANGE_LOCALE: {
    default: "`en-US`",
    meaning: "Sent as the `locale` header",
    readBy: CALLS_EXCHANGE,
  },
  ACCOUNT_NAME: {
    default: "`default`",
    meaning: "Label stored with every row (`account_name`); 1–64 letters, digits, `_.-`",
    readBy: [...LOADS_ACCOUNTS, ...REGISTERS],
  },
  SYNC_COIN_IDS: {
    default: "(empty)",
    meaning:
      "Comma-separated coin ids to snapshot (account, settings, collateral, positions), e.g. `2` or `1,2`. " +
      "Empty: no snapshots",
    readBy: ["sync", "snapshot", "worker", ...PROVES_KEY],
  },
  COIN_NAMES: {
    default: "(empty)",
    meaning:
      "Which coin name each coin id is, e.g. `2=USDT,1=USDC` (the API gives collateral by id and bills by name " +
      "and never pairs them). `verify` needs it to check bill balances and bill sums against collateral " +
      "snapshots; without it those checks are reported as skipped",
    readBy: ["sync", "snapshot", "worker", ...PROVES_KEY, "verify", "statement", "close", "audit-report"],
  },
  ANCHOR_DIR: {
    default: "(empty: no anchors)",
    meaning:
      "A directory outside the database (a mount with a retention lock, a WORM volume) where `close` writes each " +
      "close's anchor (its seal's head) and `verify` checks the closes against them; `--anchors DIR` overrides " +
      "it. See [Anchors](accounting.md#the-audit-chain-seals-anchors-proofs)",
    readBy: ["verify", "close", "anchors export"],
  },
  ANCHOR_TSA_URL: {
    default: "(empty: no timestamps)",
    meaning:
      "An RFC 3161 time-stamp authority: each anchor written gets its token beside it (`.tsr`), which " +
      "`openssl ts -verify` checks. A user and password in the URL are sent as HTTP Basic auth, never logged",
    readBy: ["close", "anchors export"],
  },
  SNAPSHOT_HISTORY_RETENTION_DAYS: {
    default: "(empty: keep forever)",
    meaning:
      "Prune snapshot history versions replaced more than this many days ago. Never current rows, never bills, " +
      "never the collateral a close was reconciled against, nothing of an account under legal hold " +
      "([Retention and legal holds](operations.md#retention-and-legal-holds)). At least " +
      "`SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS`: less is refused",
    readBy: ["sync", "snapshot", "worker"],
  },
  SNAPSHOT_HISTORY_RETENTION_FLOOR_DAYS: {
    default: "`1827`",
    meaning:
      "The shortest `SNAPSHOT_HISTORY_RETENTION_DAYS` accepted: one below it stops every command at start " +
      "(exit 2), the worker too. `1827` is five years, leap days included: the shortest of the record-keeping " +
      "periods users of ledger-sync are commonly bound by (MiFID II and MiCA: 5 years, up to 7 on request; " +
      "HMRC and FINRA: 6; GoBD: up to 10). A floor, not advice: set it to the longest period you are bound by",
    readBy: ["sync", "snapshot", "worker"],
  },
  BACKFILL_FROM: {
    default: "90 days ago",
    meaning: "Where the first sync starts: ISO date (`2026-01-31`, UTC), date-time, or epoch ms",
    readBy: ["sync", "worker"],
  },
  SYNC_LOOKBACK_MS: {
    default: "`600000`",
    meaning:
      "Each incremental run re-reads this much before the cursor, to catch bills that appear late. At least " +
      "`60000`: less is refused, since bills the exchange files a few seconds late would never be read again",
    readBy: ["sync", "worker", "verify", "close", "audit-report"],
  },
  SYNC_RESWEEP_HOURS: {
    default: "`48`",
    meaning:
      "The worker re-reads each account's last this many hours of bills once a day, at low priority, for bills " +
      "filed later than `SYNC_LOOKBACK_MS` that no continuity break gives away (a bill of amount 0). Recorded " +
      "in `sync_runs` as `bills-resweep`; moves no cursor. `0` turns it off",
    readBy: ["worker", "audit-report"],
  },
  RATE_LIMIT_IP_WEIGHT: {
    default: "`500`",
    meaning: "Request weight allowed per IP per window",
    readBy: CALLS_EXCHANGE,
  },
  RATE_LIMIT_UID_WEIGHT: {
    default: "`500`",
    meaning: "Request weight allowed per account (UID) per window",
    readBy: CALLS_EXCHANGE,
  },
  RATE_LIMIT_WINDOW_MS: {
    default: "`10000`",
    meaning: "Length of the sliding weight window",
    readBy: CALLS_EXCHANGE,
  },
  RATE_LIMIT_IP_HEADROOM: {
    default: "`0.1`",
    meaning:
      "Share (0 to 0.9) of `RATE_LIMIT_IP_WEIGHT` never spent: room for other clients on the IP and for the " +
      "exchange's window not lining up with ours",
    readBy: CALLS_EXCHANGE,
  },
  ACCOUNTS_FILE: {
    default: "(empty: one account from the variables above)",
    meaning:
      "JSON or YAML list of accounts for the worker and backfill: see " +
      "[Several accounts](operations.md#several-accounts)",
    readBy: [...LOADS_ACCOUNTS, ...REGISTERS],
  },
  LEDGER_SYNC_MASTER_KEY: {
    default: "(empty)",
    meaning:
      "The master key that seals the credentials of the accounts table: 32 bytes as 64 hex digits or base64 " +
      "(`openssl rand -hex 32`). Needed by `accounts add`, `rotate`, `import` and every process that syncs a " +
      "registered account. See [Many accounts](operations.md#many-accounts)",
    readBy: [...LOADS_ACCOUNTS, ...PROVES_KEY, "accounts rekey"],
  },
  LEDGER_SYNC_MASTER_KEY_FILE: {
    default: "(empty)",
    meaning: "Instead of `LEDGER_SYNC_MASTER_KEY`: a file holding it (Docker and Kubernetes secrets)",
    readBy: [...LOADS_ACCOUNTS, ...PROVES_KEY, "accounts rekey"],
  },
  LEDGER_SYNC_NEW_MASTER_KEY: {
    default: "(empty)",
    meaning: "`accounts rekey` only: the key every account is re-wrapped under",
    readBy: ["accounts rekey"],
  },
  LEDGER_SYNC_NEW_MASTER_KEY_FILE: {
    default: "(empty)",
    meaning: "`accounts rekey` only: a file holding the new key",
    readBy: ["accounts rekey"],
  },
  DATABASE_POOL_MAX: {
    default: "`10`",
    meaning:
      "PostgreSQL connections one process opens at most (at least 2): a pool of this minus one (minus one more " +
      "for the worker's console), and one more, open only while it takes, renews or frees account run leases; " +
      "`verify` of every account checks up to 4 accounts at once within it",
    readBy: ["worker", "verify"],
  },
  WORKER_CONCURRENCY: {
    default: "`50`",
    meaning: "Worker: jobs one process runs at once across every account; the rest wait in the queue, stalest first",
    readBy: ["worker"],
  },
  ACCOUNTS_REFRESH_MS: {
    default: "`5000`",
    meaning:
      "Worker: how often the accounts table is re-read (at most 10000): added, disabled, removed and rotated " +
      "accounts take effect within it",
    readBy: ["worker"],
  },
  SCHEDULER_TICK_MS: {
    default: "`1000`",
    meaning:
      "Worker: how often due work is moved from PostgreSQL (`sync_schedule`) into the queues; one tick at a " +
      "time across every worker",
    readBy: ["worker"],
  },
  BILLS_INTERVAL_MS: {
    default: "`60000`",
    meaning: "Worker: how often each account's bills are synced",
    readBy: ["worker", "status", "console"],
  },
  SNAPSHOT_INTERVAL_MS: {
    default: "`300000`",
    meaning: "Worker: how often each account's coins are snapshotted",
    readBy: ["worker"],
  },
  SHUTDOWN_TIMEOUT_MS: {
    default: "`30000`",
    meaning: "Worker: on SIGTERM/SIGINT, how long running jobs may finish before they are stopped at their next page",
    readBy: ["worker"],
  },
  METRICS_PORT: {
    default: "`9464`",
    meaning: "Worker: port of `/metrics`, `/healthz` (and `/queues`)",
    readBy: ["worker"],
  },
  HEALTH_MAX_SYNC_AGE_MS: {
    default: "`900000`",
    meaning: "Worker: `/healthz` fails when a stream's last successful sync is older than this",
    readBy: ["worker", "status", "console"],
  },
  JOB_LOCK_DURATION_MS: {
    default: "`30000`",
    meaning: "Worker: how long a dead worker's BullMQ job lock holds before another worker runs the job again",
    readBy: ["worker"],
  },
  RUN_LEASE_MS: {
    default: "`30000`",
    meaning:
      "How long an account's run lease (one writer per account) lasts unrenewed: a holder renews it every third " +
      "of it; one on another machine that died unseen frees it after this long (on the same machine, at once). " +
      "See [run leases](design/run-leases.md)",
    readBy: ["worker", "sync", "snapshot", "backfill", "verify", "accounts"],
  },
  BULL_BOARD_ENABLED: {
    default: "`false`",
    meaning: "Worker: mount a read-only Bull Board at `/queues` on the metrics port",
    readBy: ["worker"],
  },
  CONSOLE_ENABLED: {
    default: "`false`",
    meaning:
      "Worker: serve the read-only console (see [the console](console.md)) under `/console` on `METRICS_PORT`. " +
      "That port listens on every interface, so it needs `CONSOLE_TOKEN`: without one the worker refuses to start",
    readBy: ["worker"],
  },
  CONSOLE_TOKEN: {
    default: "(empty)",
    meaning:
      "The console's access token, 16–512 characters of `A-Z a-z 0-9 . _ ~ + / = -` (`openssl rand -hex 32`). " +
      "Required wherever the console listens on more than loopback; when set it is always required",
    readBy: ["worker", "console"],
  },
  CONSOLE_HOST: {
    default: "`127.0.0.1`",
    meaning: "`ledger-sync console`: address to listen on (`--host` overrides)",
    readBy: ["console"],
  },
  CONSOLE_PORT: {
    default: "`9470`",
    meaning: "`ledger-sync console`: port to listen on, `0` for any free one (`--port` overrides)",
    readBy: ["console"],
  },
  QUEUE_PREFIX: {
    default: "`ledger-sync`",
    meaning:
      "Prefix of every Redis key (queues, locks, weight budgets); deployments sharing a Redis use different ones. " +
      "With REDIS_CLUSTER=on it must hold a hash tag, e.g. `{ls}`",
    readBy: [...CALLS_EXCHANGE, "status"],
  },
  EGRESS_ID: {
    default: "the host name",
    meaning: "Names this process's outgoing IP: processes with the same value share the per-IP weight budget",
    readBy: CALLS_EXCHANGE,
  },
  EGRESS_LOCAL_ADDRESS: {
    default: "(empty: the system chooses)",
    meaning:
      "The local IP address this process's exchange connections leave from, on a host with several (give each " +
      "such process its own `EGRESS_ID`)",
    readBy: CALLS_EXCHANGE,
  },
  BACKFILL_IP_SHARE: {
    default: "`0.5`",
    meaning:
      "The share (0 to 1) of the egress IP's weight budget that accounts catching up on history take together " +
      "at most, so the other accounts stay fresh while one backfills",
    readBy: CALLS_EXCHANGE,
  },
  EXCHANGE_TIMEOUT_MS: {
    default: "`15000`",
    meaning: "Per-request timeout (whole response)",
    readBy: CALLS_EXCHANGE,
  },
  EXCHANGE_MAX_ATTEMPTS: {
    default: "`6`",
    meaning:
      "Attempts per request on 5xx, timeouts, network errors and malformed bodies (429s are waited out " +
      "instead, see `EXCHANGE_MAX_WAIT_MS`)",
    readBy: CALLS_EXCHANGE,
  },
  CROSS_CHECK_INTERVAL_MS: {
    default: "`0` (off)",
    meaning:
      "How often the worker cross-checks each account: the last day up to the bills bookmark, read through " +
      "the other endpoint than `BILLS_SOURCE` and compared bill by bill with the store (low priority; " +
      "differences are logged as errors and shown by `status`). At least `60000` when set. See " +
      "[Cross-check](exchange-behaviours.md#cross-check)",
    readBy: ["worker"],
  },
  BILLS_SOURCE: {
    default: "`v2`",
    meaning:
      "The endpoint the bills stream reads: `v2` (`POST /capi/v2/account/bills`, the spec's) or `v3` " +
      "(`POST /capi/v3/account/income`, paged by the exchange's cursor: about one request per 100 bills, and " +
      "a crash resumes from the last page). Per account with `billsSource` in `ACCOUNTS_FILE`. An account can " +
      "switch and back: the same rows, `bills.source` says which endpoint stored each. See " +
      "[The v3 ledger endpoint](exchange-behaviours.md#the-v3-ledger-endpoint-bills_sourcev3)",
    readBy: ["sync", "worker", "backfill", "verify"],
  },
  EXCHANGE_MAX_WAIT_MS: {
    default: "`900000`",
    meaning:
      "Longest one request keeps being refused with 429 (too many requests) before the run fails, naming the " +
      "variable. A 429 is back-pressure: the client lowers the weight it allows itself and waits at least " +
      "`RATE_LIMIT_WINDOW_MS`",
    readBy: CALLS_EXCHANGE,
  },
  EXCHANGE_MAX_SPAN_MS: {
    default: "(learnt)",
    meaning:
      "Widest `endTime − startTime` the exchange accepts, when known up front (at least 3). Otherwise learnt " +
      "from its `-1170` refusals and kept per account",
    readBy: ["sync", "worker", "backfill", "verify"],
  },
  EXCHANGE_HISTORY_DAYS: {
    default: "(learnt)",
    meaning:
      "How many days back the exchange keeps bills, when known up front (e.g. `90`). Otherwise learnt from " +
      "its `-1170` refusals and kept per account",
    readBy: ["sync", "worker", "backfill", "status", "verify", "console"],
  },
  LOG_LEVEL: {
    default: "`info`",
    meaning:
      "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs go to stderr, in the format " +
      "`LOG_FORMAT` chooses",
    readBy: LOGS,
  },
  LOG_FORMAT: {
    default: "(empty: `pretty` when stderr is a terminal, `json` otherwise)",
    meaning:
      "`json`: one JSON object per line (for services, CI and log shippers). `pretty`: one short line per log " +
      "call, `HH:MM:SS.mmm LEVEL: message` and the fields that place it (`account=`, `stream=`, " +
      "`from=`/`to=`, `attempt=`, `err=` ...), coloured on a terminal unless `NO_COLOR` is set; error stacks " +
      "only at `LOG_LEVEL` `debug`/`trace`. Secrets are redacted in both",
    readBy: LOGS,
  },
};
