// initdb and the server process of a local PostgreSQL, with every failure turned into one line
// that says what failed and what to do.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OWN_GROUP, spawnOwned, stopChild } from "../owned-process.ts";
import { binPath } from "./binaries.ts";
import { LocalServiceError } from "../errors.ts";
import type { Placement } from "./placement.ts";
import { canUse, userName } from "./server-user.ts";

export const PASSWORD = "postgres";
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
// English server messages whatever the user's locale: readiness and failures are recognised by text.
const ENV = { ...process.env, LC_ALL: "C", LC_MESSAGES: "C" };

export interface RunningCluster {
  stop(): Promise<void>;
}

/** Runs initdb unless the directory already holds a cluster. */
export async function initCluster(p: Placement): Promise<void> {
  checkDataDir(p);
  if (existsSync(join(p.dataDir, "PG_VERSION"))) return;
  // An uninitialised directory is what an interrupted first run leaves: ours to empty.
  if (existsSync(p.dataDir))
    for (const entry of readdirSync(p.dataDir)) rmSync(join(p.dataDir, entry), { recursive: true, force: true });
  mkdirSync(p.dataDir, { recursive: true, mode: 0o700 });
  if (p.runAs) chownSync(p.dataDir, p.runAs.uid, p.runAs.gid);
  const pwfile = join(tmpdir(), `ledger-sync-pg-${randomBytes(6).toString("hex")}`);
  writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (p.runAs) chownSync(pwfile, p.runAs.uid, p.runAs.gid);
  try {
    const args = [
      `--pgdata=${p.dataDir}`,
      "--auth=password",
      "--username=postgres",
      `--pwfile=${pwfile}`,
      "--encoding=UTF8",
      "--locale=C",
    ];
    const { code, output } = await runToEnd(binPath(p.nativeDir, "initdb"), args, p);
    if (code !== 0)
      throw new LocalServiceError(
        `initdb failed for ${describe(p)} (${serverMessage(output) ?? `exit ${code}`})`,
        advice(output, p),
      );
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/** Starts the server on 127.0.0.1:port (TCP only) and resolves once it accepts connections. */
export async function startCluster(
  p: Placement,
  port: number,
  settings: Record<string, string> = {},
): Promise<RunningCluster> {
  checkDataDir(p);
  await checkPortFree(port);
  const args = [
    "-D",
    p.dataDir,
    "-p",
    String(port),
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "unix_socket_directories=",
  ];
  for (const [k, v] of Object.entries(settings)) args.push("-c", `${k}=${v}`);
  const { child, disown } = spawnOwned(binPath(p.nativeDir, "postgres"), args, {
    ...asUser(p),
    env: ENV,
    stdio: ["ignore", "ignore", "pipe"],
    deathSignal: "SIGINT",
  });
  const lines: string[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new LocalServiceError(
            `PostgreSQL on port ${port} did not become ready within ${START_TIMEOUT_MS / 1000} s`,
            "see whether the machine is overloaded, or remove the data directory to start over",
          ),
        ),
      START_TIMEOUT_MS,
    );
    child.stderr!.on("data", (chunk: Buffer) => {
      // Read to the end of the server's life: an undrained pipe would block its logging.
      for (const line of chunk.toString("utf8").split("\n")) {
        if (!line) continue;
        keepLast(lines, line);
        if (line.includes("database system is ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      }
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(
        new LocalServiceError(
          `could not run ${binPath(p.nativeDir, "postgres")} (${err.message})`,
          "reinstall with `npm ci`",
        ),
      );
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      const output = lines.join("\n");
      reject(
        new LocalServiceError(
          `PostgreSQL did not start on port ${port} from ${describe(p)} ` +
            `(${serverMessage(output) ?? `exit ${code ?? signal}`})`,
          advice(output, p, port),
        ),
      );
    });
  });
  try {
    await ready;
  } catch (err) {
    disown();
    child.kill("SIGKILL");
    throw err;
  }
  let stopped: Promise<void> | undefined;
  return {
    // SIGINT is PostgreSQL's fast shutdown: roll back open transactions, checkpoint, exit.
    stop: () => (stopped ??= stopChild(child, "SIGINT", STOP_TIMEOUT_MS).finally(disown)),
  };
}

const asUser = (p: Placement) => (p.runAs ? { uid: p.runAs.uid, gid: p.runAs.gid } : {});

function runToEnd(file: string, args: string[], p: Placement): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...OWN_GROUP, ...asUser(p), env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.once("error", (err) =>
      reject(new LocalServiceError(`could not run ${file} (${err.message})`, "reinstall with `npm ci`")),
    );
    child.once("close", (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}

/** An existing data directory must belong to the server's user, who must be able to use it. */
function checkDataDir(p: Placement): void {
  if (!existsSync(p.dataDir)) return;
  const owner = statSync(p.dataDir).uid;
  const server = p.runAs?.uid ?? process.getuid?.();
  if (server !== undefined && owner !== server) {
    throw new LocalServiceError(
      `the data directory ${describe(p)} belongs to ${userName(owner)}, ` +
        `but PostgreSQL runs as ${p.runAs?.name ?? userName(server)}`,
      `remove it to start over (rm -rf ${p.named}), or run as ${userName(owner)}`,
    );
  }
  if (!canUse(p.runAs, p.dataDir)) {
    const who = p.runAs ? `the "${p.runAs.name}" user that runs PostgreSQL` : "you";
    throw new LocalServiceError(
      `the data directory ${describe(p)} is not readable and writable by ${who}`,
      `fix its permissions (chmod 700 ${p.named}) or remove it to start over`,
    );
  }
}

function checkPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (err: NodeJS.ErrnoException) => {
      const what = err.code === "EADDRINUSE" ? "is in use" : `cannot be listened on (${err.code ?? err.message})`;
      reject(
        new LocalServiceError(
          `port ${port} on 127.0.0.1 ${what}`,
          "stop what listens there (another ledger-sync demo or test run?)",
        ),
      );
    });
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()));
  });
}

/** The server's FATAL/PANIC/ERROR line (with its HINT), stripped of the log prefix. */
export function serverMessage(output: string): string | undefined {
  const lines = output.split("\n");
  const i = lines.findIndex((l) => /\b(FATAL|PANIC|ERROR):|^initdb: error:/.test(l));
  if (i < 0)
    return lines
      .filter((l) => l.trim())
      .at(-1)
      ?.trim();
  const strip = (l: string) =>
    l
      .replace(/^.*?\b(FATAL|PANIC|ERROR|HINT|DETAIL):\s*/, "")
      .replace(/^initdb: (error|hint): /, "")
      .trim();
  const hint = lines.slice(i + 1).find((l) => /\bHINT:|^initdb: hint:/.test(l));
  return hint ? `${strip(lines[i]!)}; ${strip(hint)}` : strip(lines[i]!);
}

function advice(output: string, p: Placement, port?: number): string {
  if (/No space left on device|could not extend file/i.test(output))
    return `free disk space on the file system of ${p.relocatedTo ?? p.named}, then run again`;
  if (/Address already in use|could not bind/i.test(output))
    return `stop what listens on port ${port} (another ledger-sync demo or test run?)`;
  const pid = /another postmaster \(PID (\d+)\)/.exec(output)?.[1];
  if (pid) return `another PostgreSQL (pid ${pid}) uses this data directory: stop it (kill ${pid}) and run again`;
  if (/Permission denied|wrong ownership|invalid permissions/i.test(output))
    return (
      `fix the permissions of ${p.named} (mode 700, owned by ${p.runAs?.name ?? "you"}), ` +
      "or remove it to start over"
    );
  return `remove ${p.named} to start over if it is damaged`;
}

function describe(p: Placement): string {
  return p.relocatedTo ? `${p.named} (${p.relocatedTo})` : p.named;
}

function keepLast(lines: string[], line: string): void {
  lines.push(line);
  if (lines.length > 50) lines.shift();
}
