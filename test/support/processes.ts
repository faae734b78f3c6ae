// Real ledger-sync processes for integration tests: start, read their logs, signal, await exit.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { resolve } from "node:path";

export interface Proc {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  signal(sig: NodeJS.Signals): void;
}

export function startCli(args: string[], env: Record<string, string>, cwd?: string): Proc {
  const child = spawn(process.execPath, [resolve("bin/ledger-sync.js"), ...args], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(cwd ? { cwd } : {}),
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => out, exited, signal: (sig) => void child.kill(sig) };
}

export { freePort } from "../../src/local-services/free-port.ts";

/** Polls until `check` returns true or the time runs out (then throws with `what`). */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 300,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Whether something accepts TCP connections on the loopback port (a server left running). */
export function answers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.end();
      done(true);
    });
    socket.on("error", () => done(false));
  });
}

/** Processes (other than this one) whose command line names `path`: "pid: command line" each. */
export function processesNaming(path: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmd.includes(path)) found.push(`${pid}: ${cmd.trim()}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
