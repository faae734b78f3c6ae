// Runs the real `ledger-sync` executable as a subprocess, the way users and schedulers do.
import { execFile } from "node:child_process";
import { resolve } from "node:path";

const BIN = resolve("bin/ledger-sync.js");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 120_000,
  cwd?: string,
): Promise<CliResult> {
  // Only what the test passes, plus PATH/HOME: the developer's own variables must not leak in.
  const base = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: "warn" };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...base, ...env }, timeout: timeoutMs, ...(cwd ? { cwd } : {}) },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
