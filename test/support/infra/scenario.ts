// What an infrastructure scenario (test/support/infra, bench/infra) needs and returns. The bodies are
// shared: the CI tests run them at small sizes and assert `failures` is empty; `npm run test:infra`
// runs them at full size and prints `line`.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { startCli, type Proc } from "../processes.ts";

export interface InfraServices {
  /** A superuser URL of the PostgreSQL server the scenario puts its pieces in front of. */
  adminUrl: string;
  redisUrl: string;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface ScenarioOutcome {
  /** One line: the scenario's name, its size and its figures. */
  line: string;
  /** Each property that did not hold, in a sentence; empty when the scenario passed. */
  failures: string[];
}

/** Undo steps run in reverse, each even when an earlier one fails. */
export class Teardown {
  private readonly steps: (() => unknown)[] = [];
  add(step: () => unknown): void {
    this.steps.push(step);
  }
  async run(): Promise<void> {
    for (let s = this.steps.pop(); s; s = this.steps.pop()) {
      try {
        await s();
      } catch (err) {
        process.stderr.write(`infra cleanup: ${(err as Error).message}\n`);
      }
    }
  }
}

/** Deletes every key of `url`'s Redis that starts with `prefix` (a scenario's or a bench's own). */
export async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    client.disconnect();
  }
}

/** A fresh QUEUE_PREFIX whose keys the teardown deletes. */
export function redisPrefix(url: string, teardown: Teardown): string {
  const prefix = `ls_infra_${randomBytes(4).toString("hex")}`;
  teardown.add(() => deleteRedisKeys(url, prefix));
  return prefix;
}

export interface CliRun {
  /** The exit code, or "timeout" when it had not ended within the bound (it is killed then). */
  code: number | "timeout";
  output: string;
}

/** Runs `ledger-sync args` to its end, or kills it after `timeoutMs`: a stall fails fast, not in minutes. */
export async function cli(args: string[], env: Record<string, string>, timeoutMs: number): Promise<CliRun> {
  const p = startCli(args, env);
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
  const code = await Promise.race([p.exited, bound]);
  clearTimeout(timer);
  if (code === "timeout") {
    p.signal("SIGKILL");
    await p.exited;
  }
  return { code: code ?? 1, output: p.output() };
}

/** The last meaningful line a process printed (for a failure message). */
export function lastLine(output: string): string {
  const lines = output.trim().split("\n").filter(Boolean);
  return (lines.at(-1) ?? "(no output)").slice(0, 300);
}

/** SIGTERM, then SIGKILL when it has not exited within `graceMs`; true when it stopped by itself. */
export async function stopProc(p: Proc, graceMs: number): Promise<boolean> {
  p.signal("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    p.exited.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
  ]);
  clearTimeout(timer);
  if (!stopped) {
    p.signal("SIGKILL");
    await p.exited;
  }
  return stopped;
}

/** 12345 → "12,345". */
export const thousands = (n: number): string => n.toLocaleString("en-US");
