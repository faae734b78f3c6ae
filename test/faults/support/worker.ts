// Worker and backfill processes for the fault scenarios: the real `ledger-sync worker` and
// `ledger-sync backfill` executables against the sandbox exchange, as an operator runs them.
import { sandboxExchangeEnv } from "../../../src/sandbox/index.ts";
import { freePort, startCli, type Proc } from "../../support/processes.ts";

export interface WorkerEnvOptions {
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  sandboxUrl: string;
  account: string;
  /** Further variables (they override the defaults below). */
  extra?: Record<string, string>;
}

/**
 * The environment of one account on the sandbox's default credentials. The scheduled incremental
 * job covers only the last minute (the histories of these scenarios end in the past), so the
 * backfill alone moves the history; LOG_LEVEL info keeps the lines the scenarios read.
 */
export function workerEnv(o: WorkerEnvOptions): Record<string, string> {
  return {
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    QUEUE_PREFIX: o.prefix,
    ...sandboxExchangeEnv(o.sandboxUrl),
    ACCOUNT_NAME: o.account,
    BACKFILL_FROM: String(Date.now() - 60_000),
    BILLS_INTERVAL_MS: "3600000",
    SHUTDOWN_TIMEOUT_MS: "5000",
    LOG_LEVEL: "info",
    ...o.extra,
  };
}

export async function startWorkerProcess(env: Record<string, string>): Promise<Proc> {
  return startCli(["worker"], { ...env, METRICS_PORT: String(await freePort()) });
}

export function startBackfillProcess(
  env: Record<string, string>,
  fromMs: number,
  toMs: number,
  windowHours: number,
): Proc {
  return startCli(
    ["backfill", "--from", String(fromMs), "--to", String(toMs), "--window-hours", String(windowHours)],
    env,
  );
}

export type LogLine = { level: number; msg: string; time?: string } & Record<string, unknown>;

/** The JSON log lines of a process's output (other lines are skipped). */
export function logLines(output: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of output.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const v = JSON.parse(line) as LogLine;
      if (typeof v.level === "number" && typeof v.msg === "string") out.push(v);
    } catch {
      // a line cut by a kill
    }
  }
  return out;
}

/** pino levels: 40 = warn, 50 = error, 60 = fatal. */
export const isWarnOrWorse = (l: LogLine) => l.level >= 40;

/** The other lines (not JSON logs): e.g. ioredis's "[ioredis] Unhandled error event". */
export function nonLogLines(output: string): string[] {
  return output.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("{"));
}

/** Kills a process group member and waits for its exit. */
export async function kill(p: Proc | undefined, sig: NodeJS.Signals = "SIGKILL"): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.signal(sig);
  await p.exited;
}
