// `ledger-sync status`: the fleet a page at a time, failing first, then the most behind (the query of
// store/accounts/overview.ts, the console's accounts page's too): per account its state, lag, last
// success, days of history left and requests per bills run. A page of at most DETAIL_ACCOUNTS
// accounts (one account's deployment, or narrowed with --account/--state/--limit) also gets what
// status always printed: per stream cursor, lag, last success, last error, quarantine, failed jobs;
// the worker's last verify; what was learnt of the exchange; the last cross-check. A fixed number
// of queries whatever the number of accounts (docs/design/fleet-views.md).
import { InvalidArgumentError, type Command } from "commander";
import { loadConfig, requireDatabaseUrl, type Config } from "../../config/index.ts";
import type { FleetAccount, FleetState } from "../../store/accounts/overview.ts";
import type { StoredExchangeFacts } from "../../store/exchange-profiles.ts";

interface Row {
  account: string;
  stream: string;
  cursor: string;
  lagSeconds: number;
  lastSuccess: string;
  lastError: string | null;
  quarantined: number;
  failedJobs: number | null;
}

type FailedJobs = Record<string, { count: number; lastError?: { queue: string; at: string; reason: string } }>;

/** Accounts a terminal page lists unless --limit says; JSON lists every account unless it says. */
export const TERMINAL_PAGE = 50;
/** Pages of at most this many accounts also print each one's streams, verify, exchange facts and cross-check. */
export const DETAIL_ACCOUNTS = 5;

const STATES = ["failing", "stale", "fresh", "disabled"] as const;

const whole = (flag: string, min: number) => (text: string) => {
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) < min)
    throw new InvalidArgumentError(`${flag} must be a whole number ≥ ${min}`);
  return Number(text);
};

const state = (text: string): FleetState => {
  if (!(STATES as readonly string[]).includes(text))
    throw new InvalidArgumentError(`--state must be one of ${STATES.join(", ")}`);
  return text as FleetState;
};

interface StatusOptions {
  json?: boolean;
  account?: string;
  state?: FleetState;
  limit?: number;
  offset: number;
}

export function registerStatus(program: Command): void {
  program
    .command("status")
    .description(
      "the accounts, failing first, then by lag: per account its state, lag, last success, days of history " +
        "left and requests per bills run; for a page of at most 5 accounts also per stream cursor, lag, last " +
        "success, last error, quarantined records, failed jobs, the worker's last verify, what was learnt of the " +
        "exchange and the last cross-check (a table on a terminal, JSON otherwise)",
    )
    .option("--json", "print JSON even on a terminal")
    .option("--account <text>", "only accounts whose name contains the text (ignoring case)")
    .option(
      "--state <state>",
      "only accounts in this state: failing, stale (bills lag over HEALTH_MAX_SYNC_AGE_MS), fresh, disabled",
      state,
    )
    .option(
      "--limit <n>",
      `accounts per page (default ${TERMINAL_PAGE} on a terminal, every account in JSON)`,
      whole("--limit", 1),
    )
    .option("--offset <n>", "accounts to skip", whole("--offset", 0), 0)
    .action(async (o: StatusOptions) => {
      const config = loadConfig();
      const asJson = o.json === true || !process.stdout.isTTY;
      const limit = o.limit ?? (asJson ? null : TERMINAL_PAGE);
      const [{ createDb }, { readFleet, RUNS_AVERAGED }, { readStoreStatus }, { readVerifyStatus }] = await Promise.all(
        [
          import("../../store/prisma.ts"),
          import("../../store/accounts/overview.ts"),
          import("../../store/status.ts"),
          import("../../verify/verify-status.ts"),
        ],
      );
      const db = createDb(requireDatabaseUrl(config));
      try {
        // Failed jobs first: they make an account failing, which places it in the order.
        const failed = config.redisUrl
          ? await readFailedJobs(config, config.redisUrl, config.worker.queuePrefix)
          : undefined;
        const now = Date.now();
        const fleet = await readFleet(db, {
          ...(o.account === undefined ? {} : { search: o.account }),
          ...(o.state === undefined ? {} : { state: o.state }),
          limit,
          offset: o.offset,
          nowMs: now,
          staleAfterMs: config.worker.healthMaxSyncAgeMs,
          ...(config.exchange.limits.historyDays === undefined
            ? {}
            : { historyDays: config.exchange.limits.historyDays }),
          withFailedJobs: Object.keys(failed ?? {}).filter((a) => failed![a]!.count > 0),
        });
        const names = fleet.accounts.map((a) => a.name);
        const listed = new Set(names);
        // The whole fleet on one page reads every row as status always did; a page reads its accounts' rows.
        const everything = limit === null && o.offset === 0 && o.account === undefined && o.state === undefined;
        const onPage = (account: string) => everything || listed.has(account);
        const details = asJson || fleet.accounts.length <= DETAIL_ACCOUNTS;
        const store = details ? await readStoreStatus(db, everything ? undefined : names) : undefined;
        const verify = details
          ? (await readVerifyStatus(db, names.length === 1 ? names[0] : undefined)).filter((v) => onPage(v.account))
          : [];
        const rows: Row[] = (store?.streams ?? []).map((s) => {
          const f = failed?.[s.account];
          return {
            account: s.account,
            stream: s.stream,
            cursor: new Date(s.cursorMs).toISOString(),
            lagSeconds: Math.max(0, Math.round((now - s.cursorMs) / 1000)),
            lastSuccess: s.lastSuccess.toISOString(),
            lastError: f?.lastError ? `${f.lastError.at} ${f.lastError.queue}: ${f.lastError.reason}` : null,
            quarantined: store!.quarantined[s.account] ?? 0,
            failedJobs: failed ? (f?.count ?? 0) : null,
          };
        });
        if (asJson) {
          process.stdout.write(
            `${JSON.stringify({
              streams: rows,
              backfillWindowsDone: store!.backfillWindows,
              failedJobsKnown: failed !== undefined,
              verify,
              exchange: exchangeByAccount(store!.exchange),
              crossChecks: store!.crossChecks,
              accounts: fleet.accounts.map((a) => accountJson(a, failed)),
              page: {
                total: fleet.total,
                offset: o.offset,
                limit,
                counts: fleet.counts,
                requestsPerRun: fleet.requestsPerRun,
                runsAveraged: RUNS_AVERAGED,
                billsIntervalMs: config.worker.billsIntervalMs,
                staleAfterMs: config.worker.healthMaxSyncAgeMs,
              },
            })}\n`,
          );
          return;
        }
        const [{ daysLeftText, lagText }, { exchangeStatusLines, humanDuration }] = await Promise.all([
          import("../../console/html/words.ts"),
          import("../exchange-facts-text.ts"),
        ]);
        const fleetHeader = ["account", "state", "lag", "last success", "history left", "requests/run", "verify"];
        const fleetTable = fleet.accounts.map((a) => [
          a.name,
          a.state === "failing" ? `failing (${a.reasons.join(", ")})` : a.state,
          a.cursorMs === null ? "never synced" : lagText(now - a.cursorMs),
          a.lastSuccess?.toISOString() ?? "never",
          a.historyDaysLeft === null ? "unknown" : daysLeftText(a.historyDaysLeft),
          a.requestsPerRun === null ? "-" : a.requestsPerRun.toFixed(1),
          a.verify === null ? "not run" : a.verify === "pass" ? "pass" : `FAIL (${a.verifyFailures})`,
        ]);
        const shown = fleet.accounts.length === 0 ? "none" : `${o.offset + 1}-${o.offset + fleet.accounts.length}`;
        const n = fleet.counts;
        const counts = `${n.failing} failing, ${n.stale} stale, ${n.fresh} fresh, ${n.disabled} disabled`;
        const over = fleet.total === 1 ? "this account" : `these ${fleet.total} accounts`;
        const every = humanDuration(config.worker.billsIntervalMs);
        process.stdout.write(
          [
            ...(fleet.accounts.length === 0 ? [] : aligned(fleetHeader, fleetTable)),
            `accounts ${shown} of ${fleet.total} (${counts}; failing first, then by lag, disabled last)`,
            `requests: about ${fleet.requestsPerRun.toFixed(1)} per bills run (every ${every}) over ${over}, ` +
              `each the average of its last ${RUNS_AVERAGED} runs`,
          ].join("\n") + "\n",
        );
        if (!details) {
          process.stdout.write(
            `streams, verify and exchange facts are printed for pages of at most ${DETAIL_ACCOUNTS} accounts ` +
              `(--account TEXT, --state, --limit ${DETAIL_ACCOUNTS})\n`,
          );
          return;
        }
        if (rows.length > 0) {
          const header = [
            "account",
            "stream",
            "cursor",
            "lag",
            "last success",
            "quarantined",
            "failed jobs",
            "last error",
          ];
          const table = rows.map((r) => [
            r.account,
            r.stream,
            r.cursor,
            `${r.lagSeconds}s`,
            r.lastSuccess,
            String(r.quarantined),
            r.failedJobs === null ? "n/a (no REDIS_URL)" : String(r.failedJobs),
            r.lastError ?? "-",
          ]);
          process.stdout.write(`\n${aligned(header, table).join("\n")}\n`);
        }
        for (const v of verify) {
          const when = v.lastRunAt ? v.lastRunAt.toISOString() : "never";
          process.stdout.write(
            `verify ${v.account}: ${
              v.outcome === null
                ? "not run yet"
                : v.outcome === "pass"
                  ? `pass (${when})`
                  : `FAIL, ${v.failures} failure(s) (${when})`
            }\n`,
          );
          for (const f of v.failing.slice(0, 10))
            process.stdout.write(`  ${f.length > 200 ? `${f.slice(0, 199)}…` : f}\n`);
        }
        for (const e of store!.exchange) process.stdout.write(`${exchangeStatusLines(e, new Date(now)).join("\n")}\n`);
        for (const c of store!.crossChecks) {
          const range =
            c.fromMs === null || c.toMs === null
              ? ""
              : ` over ${new Date(c.fromMs).toISOString()} .. ${new Date(c.toMs).toISOString()}`;
          process.stdout.write(
            `cross-check ${c.account}: ${c.outcome === "ok" ? "pass" : `FAIL: ${c.error ?? c.outcome}`}` +
              `${range} (${c.at.toISOString()})\n`,
          );
        }
      } finally {
        await db.$disconnect();
      }
    });
}

async function readFailedJobs(config: Config, redisUrl: string, prefix: string): Promise<FailedJobs> {
  const [{ openRedis }, { failedJobsByAccount }] = await Promise.all([
    import("../../config/redis-connection.ts"),
    import("../../jobs/failed-jobs.ts"),
  ]);
  const redis = openRedis(config, { url: redisUrl, maxRetriesPerRequest: 1 });
  try {
    return await failedJobsByAccount(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

/** Cells padded to their column, each cut at 80 characters. */
function aligned(header: string[], table: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => Math.min(r[i]!.length, 80))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (c.length > 80 ? `${c.slice(0, 79)}…` : c).padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(header), ...table.map(line)];
}

/** An account of the JSON `accounts` list. */
function accountJson(a: FleetAccount, failed: FailedJobs | undefined): Record<string, unknown> {
  return {
    account: a.name,
    registered: a.registered,
    status: a.status,
    state: a.state,
    failing: a.failing,
    reasons: a.reasons,
    cursor: a.cursorMs === null ? null : new Date(a.cursorMs).toISOString(),
    lagSeconds: a.lagSeconds,
    lastSuccess: a.lastSuccess?.toISOString() ?? null,
    historyDays: a.historyDays,
    historySource: a.historySource,
    historyDaysLeft: a.historyDaysLeft,
    requestsPerRun: a.requestsPerRun,
    runsAveraged: a.runsAveraged,
    verify: a.verify,
    verifyFailures: a.verifyFailures,
    quarantined: a.quarantined,
    failedJobs: failed ? (failed[a.name]?.count ?? 0) : null,
  };
}

/** The JSON form: every fact (null when not learnt) and when it was stored, by account. */
function exchangeByAccount(stored: StoredExchangeFacts[]): Record<string, Omit<StoredExchangeFacts, "account">> {
  return Object.fromEntries(stored.map(({ account, ...facts }) => [account, facts]));
}
