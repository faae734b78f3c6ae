// A real `ledger-sync <command>` process for a benchmark: a clean environment (only what the
// benchmark passes, so the caller's DATABASE_URL & co. never leak in), its output scanned line by
// line, stopped by its scope (SIGTERM, then SIGKILL after a grace period).
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import type { Cleanup } from "./cleanup.ts";

export interface CliProcess {
  pid: number;
  child: ChildProcess;
  /** The last lines of stdout and stderr together (for error messages). */
  tail(): string;
  /** stdout only, complete (commands that print a result). */
  stdout(): string;
  /** Resolves with the first line (already seen or to come) that matches. */
  waitForLine(re: RegExp, timeoutMs: number): Promise<string>;
  exited: Promise<number | null>;
  stop(graceMs?: number): Promise<number | null>;
}

const TAIL_LINES = 200;

/**
 * What executing bin/ledger-sync.js adds to `node bin/ledger-sync.js`, as in the Docker image and
 * with npx: its `#!/usr/bin/env -S [NAME=value ...] node [options]` line. startCli runs
 * `node bin/ledger-sync.js`, which does not read that line, so the assignments are passed as
 * environment and the options as NODE_OPTIONS: every benchmark measures the CLI as it runs.
 */
export function binStart(): { env: Record<string, string>; nodeOptions: string; line: string } {
  const first = readFileSync(resolve("bin/ledger-sync.js"), "utf8").split("\n", 1)[0] ?? "";
  const words = /^#!\/usr\/bin\/env -S (.*)$/.exec(first)?.[1]?.trim().split(/\s+/) ?? [];
  const env: Record<string, string> = {};
  while (words[0]?.includes("=")) {
    const [name, ...value] = words.shift()!.split("=");
    env[name!] = value.join("=");
  }
  if (words.shift() !== "node") return { env: {}, nodeOptions: "", line: "" };
  const nodeOptions = words.join(" ");
  return {
    env,
    nodeOptions,
    line: [...Object.entries(env).map(([k, v]) => `${k}=${v}`), "node", nodeOptions].filter(Boolean).join(" "),
  };
}

export function startCli(
  args: string[],
  env: Record<string, string>,
  scope: Cleanup,
  name = args[0] ?? "ledger-sync",
): CliProcess {
  const start = binStart();
  const child = spawn(process.execPath, [resolve("bin/ledger-sync.js"), ...args], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...start.env,
      ...(start.nodeOptions ? { NODE_OPTIONS: start.nodeOptions } : {}),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let out = "";
  const waiters: { re: RegExp; resolve: (line: string) => void }[] = [];
  const seen: string[] = [];
  const onLine = (line: string) => {
    lines.push(line);
    if (lines.length > TAIL_LINES) lines.shift();
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      if (w.re.test(line)) {
        waiters.splice(i, 1);
        w.resolve(line);
      }
    }
    // The first lines are kept for waitForLine calls made after their line came (start-up messages).
    if (seen.length < 1000) seen.push(line);
  };
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  createInterface({ input: child.stdout! }).on("line", onLine);
  createInterface({ input: child.stderr! }).on("line", onLine);
  const exited = new Promise<number | null>((r) =>
    child.once("exit", (code, signal) => r(code ?? (signal ? 128 : null))),
  );
  const stop = async (graceMs = 15_000) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    }
    return exited;
  };
  scope.add(`stop ${name} (pid ${child.pid})`, () => stop());
  return {
    pid: child.pid!,
    child,
    tail: () => lines.join("\n"),
    stdout: () => out,
    waitForLine: (re, timeoutMs) => {
      const earlier = seen.find((l) => re.test(l));
      if (earlier !== undefined) return Promise.resolve(earlier);
      return new Promise<string>((resolveLine, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `${name}: no line matching ${re} within ${timeoutMs} ms; last output:\n${lines.slice(-20).join("\n")}`,
              ),
            ),
          timeoutMs,
        );
        const w = {
          re,
          resolve: (l: string) => {
            clearTimeout(timer);
            resolveLine(l);
          },
        };
        waiters.push(w);
        void exited.then((code) => {
          if (!waiters.includes(w)) return;
          waiters.splice(waiters.indexOf(w), 1);
          clearTimeout(timer);
          reject(
            new Error(
              `${name} exited (code ${code}) before printing ${re}; last output:\n${lines.slice(-20).join("\n")}`,
            ),
          );
        });
      });
    },
    exited,
    stop,
  };
}
