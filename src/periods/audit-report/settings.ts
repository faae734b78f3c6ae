// Section 5 of the audit report: the configuration that shaped the month's copy, as far as this
// process can reach it. The account's bills endpoint (its accounts row, its ACCOUNTS_FILE entry, or
// BILLS_SOURCE), and the endpoints the period's runs and bills record; SYNC_LOOKBACK_MS,
// SYNC_RESWEEP_HOURS and COIN_NAMES from this process's environment (set or the default: the runs
// themselves may have had others); and the exchange profile learnt for the account (exchange_profiles).
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { accountsFile } from "../../config/accounts.ts";
import type { Config } from "../../config/index.ts";
import { readAllExchangeFacts } from "../../store/exchange-profiles.ts";
import { accountKey, instantOf } from "../../store/ledger-rows.ts";
import type { Db } from "../../store/prisma.ts";
import { durationText } from "../../statement/max-gap.ts";
import type { AuditRun, AuditSetting } from "./report.ts";

export interface SettingsInput {
  account: string;
  period: { fromMs: number; toMs: number };
  config: Config;
  /** The environment, to tell a value set from a default. */
  env: NodeJS.ProcessEnv;
  runs: AuditRun[];
}

export async function readSettings(db: Db, i: SettingsInput): Promise<AuditSetting[]> {
  const given = (name: string) => (i.env[name] === undefined || i.env[name] === "" ? "default" : "environment");
  const hours = i.config.resweepMs / 3_600_000;
  const coinNames = Object.entries(i.config.coinNames).sort(([a], [b]) => Number(a) - Number(b));
  return [
    await billsSource(db, i.account, i.config, given("BILLS_SOURCE")),
    ...(await endpointsSeen(db, i)),
    {
      name: "SYNC_LOOKBACK_MS",
      value: `${i.config.lookbackMs} (${durationText(i.config.lookbackMs)})`,
      from: given("SYNC_LOOKBACK_MS"),
    },
    {
      name: "SYNC_RESWEEP_HOURS",
      value: hours === 0 ? "0 (no daily re-sweep)" : `${hours} (the last ${hours}h re-read daily)`,
      from: given("SYNC_RESWEEP_HOURS"),
    },
    {
      name: "COIN_NAMES",
      value: coinNames.length === 0 ? "(not set)" : coinNames.map(([id, name]) => `${id}=${name}`).join(","),
      from: given("COIN_NAMES"),
    },
    ...(await exchangeProfile(db, i.account)),
  ];
}

/** The endpoint the account's bills stream reads, where the worker and `sync` take it from. */
async function billsSource(db: Db, account: string, config: Config, envFrom: string): Promise<AuditSetting> {
  const name = "BILLS_SOURCE";
  const [row] = await db.$queryRawUnsafe<{ bills_source: string | null }[]>(
    `SELECT a.bills_source
     FROM accounts a
     WHERE a.name = $1`,
    account,
  );
  if (row?.bills_source) return { name, value: row.bills_source, from: "accounts table (the account's own)" };
  if (row) return { name, value: config.billsSource, from: `${envFrom} (the accounts table row names none)` };
  if (config.accountsFile) {
    const entry = fileEntry(config.accountsFile, account);
    if (typeof entry === "string") return { name, value: config.billsSource, from: `${envFrom}; ${entry}` };
    if (entry?.billsSource)
      return { name, value: entry.billsSource, from: `ACCOUNTS_FILE ${config.accountsFile} (the account's own)` };
  }
  return { name, value: config.billsSource, from: envFrom };
}

/** The account's ACCOUNTS_FILE entry, or why it cannot be read (the file is the user's: it may be gone). */
function fileEntry(file: string, account: string): { billsSource?: string } | undefined | string {
  try {
    const text = readFileSync(file, "utf8");
    const parsed = accountsFile.safeParse(/\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text));
    if (!parsed.success) return `ACCOUNTS_FILE ${file} is not valid`;
    return parsed.data.accounts.find((a) => a.name === account);
  } catch (err) {
    return `ACCOUNTS_FILE ${file} cannot be read (${(err as Error).message.split("\n")[0]})`;
  }
}

/** The endpoints the period's runs read and its bills were first stored from, as the rows record them. */
async function endpointsSeen(db: Db, i: SettingsInput): Promise<AuditSetting[]> {
  const runs = new Map<string, number>();
  for (const r of i.runs) if (r.source !== null) runs.set(r.source, (runs.get(r.source) ?? 0) + 1);
  const bills = await db.$queryRawUnsafe<{ source: string; n: number }[]>(
    `SELECT b.source, count(*)::int AS n
     FROM bill_rows b
     WHERE b.account_id = ${accountKey("$1")}
       AND b.created_at >= ${instantOf("$2")} AND b.created_at < ${instantOf("$3")}
     GROUP BY b.source
     ORDER BY b.source`,
    i.account,
    String(i.period.fromMs),
    String(i.period.toMs),
  );
  const counted = (pairs: [string, number][], what: string) =>
    pairs.length === 0 ? "(none)" : pairs.map(([s, n]) => `${s}: ${n} ${what}`).join(", ");
  return [
    {
      name: "endpoints of the period's runs",
      value: counted([...runs].sort(), "run(s)"),
      from: "sync_runs (the runs' own detail)",
    },
    {
      name: "endpoints the period's bills came from",
      value: counted(
        bills.map((b) => [b.source, b.n]),
        "bill(s)",
      ),
      from: "bills.source (the endpoint that first stored each)",
    },
  ];
}

/** What ledger-sync learnt of how the exchange serves the account (docs/schema.md, exchange_profiles). */
async function exchangeProfile(db: Db, account: string): Promise<AuditSetting[]> {
  const p = (await readAllExchangeFacts(db)).find((f) => f.account === account);
  if (!p) return [{ name: "exchange profile", value: "(nothing learnt yet)", from: "exchange_profiles" }];
  const from = `exchange_profiles (learnt; stored ${p.updatedAt.toISOString()})`;
  const text = (v: unknown) => (v === null || v === undefined ? "(not learnt)" : String(v));
  const ms = (v: number | null) => (v === null ? "(not learnt)" : `${v} (${durationText(v)})`);
  return [
    ["page_size", text(p.pageSize)],
    ["page_size_capped", text(p.pageSizeCapped)],
    ["max_span_ms", ms(p.maxSpanMs)],
    ["history_ms", ms(p.historyMs)],
    ["filter_offset_ms", String(p.filterOffsetMs)],
    ["start_inclusive", text(p.startInclusive)],
    ["end_inclusive", text(p.endInclusive)],
    ["has_next_page", text(p.hasNextPage)],
    ["account_endpoint", text(p.accountEndpoint)],
    ["v3_balance_served", text(p.v3BalanceServed)],
  ].map(([name, value]) => ({ name: `exchange profile: ${name!}`, value: value!, from }));
}
