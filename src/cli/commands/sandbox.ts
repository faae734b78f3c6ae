import { InvalidArgumentError, Option, type Command } from "commander";
import type { AccountEndpointMode, HasNextMode, Ordering, SandboxOptions } from "../../sandbox/index.ts";
import { parseInstant } from "../../config/index.ts";
import { CliExit, EXIT } from "../exit-codes.ts";

const int = (name: string, min: number) => (v: string) => {
  if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) < min)
    throw new InvalidArgumentError(`${name} must be a whole number >= ${min}`);
  return Number(v);
};
const port = (v: string) => {
  if (!/^[0-9]{1,5}$/.test(v) || Number(v) > 65535)
    throw new InvalidArgumentError("--port must be a port number from 0 to 65535");
  return Number(v);
};
const rate = (v: string) => {
  const n = Number(v);
  if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(v) || !Number.isFinite(n))
    throw new InvalidArgumentError("must be a probability between 0 and 1, e.g. 0.05");
  return n;
};
const instant = (v: string) => {
  const ms = parseInstant(v);
  if (ms === undefined) throw new InvalidArgumentError("must be an ISO date or epoch milliseconds");
  return ms;
};
const days = (v: string) => {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v) || !(Number(v) > 0) || !Number.isFinite(Number(v)))
    throw new InvalidArgumentError("--history-days must be a positive number of days, e.g. 90");
  return Number(v);
};
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Milliseconds (`90000`) or a duration (`36h`, `2d`, `1.5d`, `90s`, `500ms`), as whole milliseconds. */
export function parseSpan(v: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$/.exec(v);
  const ms = m === null ? NaN : Number(m[1]) * (UNIT_MS[m[2] ?? "ms"] as number);
  if (!Number.isSafeInteger(ms))
    throw new InvalidArgumentError("--max-span must be whole milliseconds or a duration like 36h or 2d");
  return ms;
}
const refusalStatus = (v: string) => {
  if (v !== "200" && v !== "400") throw new InvalidArgumentError("--refusal-status must be 200 or 400");
  return Number(v) as 200 | 400;
};
const pageCap = (v: string) => {
  if (!/^[0-9]{1,3}$/.test(v) || Number(v) < 1 || Number(v) > 100)
    throw new InvalidArgumentError("--page-cap must be a whole number from 1 to 100");
  return Number(v);
};

const weightPerSec = (v: string) => {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v) || !(Number(v) > 0))
    throw new InvalidArgumentError("--co-tenant must be a UID weight per second > 0, e.g. 30");
  return Number(v);
};

const accounts = (v: string) => {
  if (!/^[0-9]{1,7}$/.test(v) || Number(v) < 1 || Number(v) > 1_000_000)
    throw new InvalidArgumentError("--accounts must be a whole number from 1 to 1000000");
  return Number(v);
};
const perMinute = (v: string) => {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v) || !(Number(v) > 0) || Number(v) > 6_000_000)
    throw new InvalidArgumentError("--live-bills-per-minute must be a number of bills per minute > 0, e.g. 60");
  return Number(v);
};

/** The parsed flags of `ledger-sync sandbox`. */
export interface SandboxFlags {
  host: string;
  port: number;
  seed: number;
  bills: number;
  from?: number;
  to?: number;
  ordering: Ordering;
  startExclusive?: boolean;
  endExclusive?: boolean;
  bursts: number;
  faults: number;
  limits: boolean;
  historyDays?: number;
  maxSpan?: number;
  refusalStatus?: 200 | 400;
  pageCap?: number;
  hasNext: HasNextMode;
  filterSkewMs?: number;
  unknownTypes?: number;
  ignoreTimeFilter?: boolean;
  nullSymbols?: boolean;
  coTenant?: number;
  chargeRefused?: boolean;
  accountEndpoint?: AccountEndpointMode;
  v3Balance?: boolean;
  /** Fleet mode (README "Fleet mode"): N further accounts; the other two need it. */
  accounts?: number;
  billsPerAccount?: number;
  liveBillsPerMinute?: number;
}

/** startSandbox options for the flags (a flag left out leaves the option at its default). */
export function sandboxOptionsFromFlags(o: SandboxFlags): SandboxOptions {
  if (o.accounts === undefined && (o.billsPerAccount !== undefined || o.liveBillsPerMinute !== undefined))
    throw new CliExit(EXIT.usage, "--bills-per-account and --live-bills-per-minute need --accounts");
  return {
    host: o.host,
    port: o.port,
    seed: o.seed,
    billCount: o.bills,
    ...(o.from === undefined ? {} : { startMs: o.from }),
    ...(o.to === undefined ? {} : { endMs: o.to }),
    ordering: o.ordering,
    startInclusive: !o.startExclusive,
    endInclusive: !o.endExclusive,
    bursts: o.bursts,
    faults: { rate: o.faults },
    ...(o.limits ? {} : { limits: null }),
    ...(o.historyDays === undefined ? {} : { historyDays: o.historyDays }),
    ...(o.maxSpan === undefined ? {} : { maxSpanMs: o.maxSpan }),
    ...(o.refusalStatus === undefined ? {} : { refusalStatus: o.refusalStatus }),
    ...(o.pageCap === undefined ? {} : { pageCap: o.pageCap }),
    hasNext: o.hasNext,
    ...(o.filterSkewMs === undefined ? {} : { filterSkewMs: o.filterSkewMs }),
    ...(o.unknownTypes === undefined ? {} : { unknownTypes: o.unknownTypes }),
    ...(o.ignoreTimeFilter ? { ignoreTimeFilter: true } : {}),
    ...(o.nullSymbols ? { nullSymbols: true } : {}),
    ...(o.coTenant === undefined ? {} : { coTenant: { uidWeightPerSec: o.coTenant } }),
    ...(o.chargeRefused ? { chargeRefused: true } : {}),
    ...(o.accountEndpoint === undefined ? {} : { accountEndpoint: o.accountEndpoint }),
    ...(o.v3Balance ? { v3Balance: true } : {}),
    ...(o.accounts === undefined
      ? {}
      : {
          fleet: {
            accounts: o.accounts,
            ...(o.billsPerAccount === undefined ? {} : { billsPerAccount: o.billsPerAccount }),
            ...(o.liveBillsPerMinute === undefined ? {} : { liveBillsPerMinute: o.liveBillsPerMinute }),
          },
        }),
  };
}

/** One line on fleet mode: how many accounts and how their credentials are derived (the rule,
 *  not the secrets), or null without it. */
export function fleetLine(o: SandboxOptions): string | null {
  const f = o.fleet;
  if (f === undefined) return null;
  const seed = o.seed ?? 1;
  const live = f.liveBillsPerMinute === undefined ? "" : `, ${f.liveBillsPerMinute} new bills/min`;
  return (
    `fleet: ${f.accounts} accounts (${f.billsPerAccount ?? 20} bills each${live}); account i = 0..${f.accounts - 1} ` +
    `signs with fleetCredentials(${seed}, i) of src/sandbox/fleet.ts (API key fleet-${seed}-<i>), ` +
    `user_id fleetUid(${seed}, i)`
  );
}

/** One line naming the real-exchange behaviours switched on, or null when none is. */
export function behavioursLine(o: SandboxOptions): string | null {
  const parts: string[] = [];
  if (o.historyDays !== undefined) parts.push(`history ${o.historyDays} days`);
  if (o.maxSpanMs !== undefined) parts.push(`max span ${o.maxSpanMs} ms`);
  if (o.refusalStatus !== undefined) parts.push(`refusals with HTTP ${o.refusalStatus}`);
  if (o.pageCap !== undefined) parts.push(`page cap ${o.pageCap}`);
  if (o.hasNext !== undefined && o.hasNext !== "honest") parts.push(`hasNextPage ${o.hasNext}`);
  if (o.filterSkewMs !== undefined) parts.push(`filter skew up to ${o.filterSkewMs} ms`);
  if (o.unknownTypes !== undefined) parts.push(`${o.unknownTypes} bills of unknown types`);
  if (o.ignoreTimeFilter === true) parts.push("time filter ignored");
  if (o.nullSymbols === true) parts.push("v2 symbol null for bills of no contract");
  if (o.coTenant !== undefined) parts.push(`another client on the UID spending ${o.coTenant.uidWeightPerSec} weight/s`);
  if (o.chargeRefused === true) parts.push("refused requests charged");
  if (o.accountEndpoint !== undefined && o.accountEndpoint !== "seed")
    parts.push(`account read served as ${o.accountEndpoint === "both" ? "both forms" : "the public form only"}`);
  if (o.v3Balance === true) parts.push("v3 balance endpoint served");
  return parts.length === 0 ? null : `behaviours: ${parts.join(", ")}`;
}

export function registerSandbox(program: Command): void {
  program
    .command("sandbox")
    .description(
      "run the sandbox exchange: both endpoints, signed requests, weight limits and seeded history, " +
        "for trying ledger-sync without keys",
    )
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--port <port>", "port to listen on", port, 8787)
    .option("--seed <n>", "history seed (same seed, same history)", int("--seed", 0), 1)
    .option("--bills <n>", "bills of generated history", int("--bills", 0), 5000)
    .option("--from <date|ms>", "history start (default 30 days ago)", instant)
    .option("--to <date|ms>", "history end (default now)", instant)
    .addOption(
      new Option("--ordering <order>", "item ordering within a page")
        .choices(["asc", "desc", "newest-shuffled"])
        .default("desc"),
    )
    .option("--start-exclusive", "treat startTime as exclusive")
    .option("--end-exclusive", "treat endTime as exclusive")
    .option("--bursts <n>", "same-millisecond bursts of more than 100 bills", int("--bursts", 0), 0)
    .option(
      "--faults <rate>",
      "probability of an injected fault per request (429, 5xx, stall, truncated body, reset)",
      rate,
      0,
    )
    .option("--no-limits", "do not enforce weight limits")
    .option("--history-days <days>", "keep only the last N days: an older startTime is refused (code -1170)", days)
    .option(
      "--max-span <ms|duration>",
      "refuse endTime - startTime above this (code -1170); ms, or e.g. 36h, 2d",
      parseSpan,
    )
    .option("--refusal-status <status>", "HTTP status of -1170 refusals: 200 or 400 (default 400)", refusalStatus)
    .option("--page-cap <n>", "serve at most N items per page whatever limit says (1-100)", pageCap)
    .addOption(
      new Option("--has-next <mode>", "hasNextPage: truthful, left out, or always true")
        .choices(["honest", "absent", "always"])
        .default("honest"),
    )
    .option(
      "--filter-skew-ms <ms>",
      "filter (and order) on a hidden time up to N ms after the ctime shown",
      int("--filter-skew-ms", 0),
    )
    .option(
      "--unknown-types <n>",
      "N bills carry a businessType outside the spec (position_adl, bonus_airdrop, fee_rebate)",
      int("--unknown-types", 0),
    )
    .option("--ignore-time-filter", "accept startTime/endTime but do not filter on them")
    .option(
      "--null-symbols",
      'send "symbol": null on v2 for deposits, withdrawals and transfers (as the live exchange)',
    )
    .option(
      "--co-tenant <weight/s>",
      "another client on the same UID spends this UID weight per second, steadily",
      weightPerSec,
    )
    .option("--charge-refused", "charge requests refused with 429 against the budget too, as real exchanges do")
    .addOption(
      new Option(
        "--account-endpoint <form>",
        "account read path served: seed (/capi/v2/account/account), public (/capi/v2/account/getAccount) or both",
      )
        .choices(["seed", "public", "both"])
        .default("seed"),
    )
    .option("--v3-balance", "serve GET /capi/v3/account/balance (404 otherwise)")
    .option(
      "--accounts <n>",
      "fleet mode: also serve N accounts, each with its own key, UID and history (keys fleet-<seed>-<i>)",
      accounts,
    )
    .option(
      "--bills-per-account <n>",
      "bills of generated history per fleet account (default 20)",
      int("--bills-per-account", 0),
    )
    .option(
      "--live-bills-per-minute <rate>",
      "append new bills at random fleet accounts at this average rate",
      perMinute,
    )
    .action(async (o: SandboxFlags) => {
      const { startSandbox } = await import("../../sandbox/index.ts");
      const options = sandboxOptionsFromFlags(o);
      const sandbox = await startSandbox(options);
      const behaviours = behavioursLine(options);
      const fleet = fleetLine(options);
      process.stdout.write(
        [
          `sandbox exchange listening on ${sandbox.url} (${o.bills} bills, seed ${o.seed})`,
          ...(behaviours === null ? [] : [behaviours]),
          ...(fleet === null ? [] : [fleet]),
          "point ledger-sync at it with:",
          `  EXCHANGE_BASE_URL=${sandbox.url} EXCHANGE_API_KEY=sandbox-key ` +
            "EXCHANGE_API_SECRET=sandbox-secret EXCHANGE_API_PASSPHRASE=sandbox-passphrase",
          "Ctrl-C stops it.",
          "",
        ].join("\n"),
      );
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      await sandbox.close();
    });
}
