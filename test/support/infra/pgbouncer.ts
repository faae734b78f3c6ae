// PgBouncer (Debian's 1.18) in front of a PostgreSQL server, for the tests and the infrastructure
// suite (bench/infra). Its config is a stock one except what the scenario is about: the pool mode
// and size, a loopback address, trust auth (the test server trusts 127.0.0.1). In particular no
// `ignore_startup_parameters`: a client that sends a parameter the pooler refuses must fail here as it
// would behind a rented pooler. PgBouncer refuses to run as root, so root runs it as `postgres`
// (else `nobody`), its files in a temporary directory that user owns.
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PGBOUNCER = "/usr/sbin/pgbouncer";

export interface PgBouncerOptions {
  /** The server behind it (an admin URL: its host and port are used). */
  serverUrl: string;
  /** Roles that may connect (trust auth still needs each one in auth_file). */
  users: readonly string[];
  /** Default "transaction": the mode of Supabase's, Neon's and Azure's poolers. */
  poolMode?: "transaction" | "session" | "statement";
  /** Server connections per database and user (default 3). */
  poolSize?: number;
  /** Client connections in all (default 1000: the scenarios are about the server pool, not this). */
  maxClientConn?: number;
  /**
   * Lend the server connection idle longest (FIFO) instead of PgBouncer's default, the one used last.
   * No pooler owes a client the server connection its predecessor had, and with LIFO the next
   * process after a kill gets the very connection whose session still holds a leaked lock (session
   * advisory locks are re-entrant), which hides the leak. Default false.
   */
  serverRoundRobin?: boolean;
}

export interface PgBouncer {
  host: string;
  port: number;
  /** A URL through the pooler: `user` on `database` (no password: trust). */
  url(user: string, database: string): string;
  /** What PgBouncer has logged so far (its stderr). */
  log(): string;
  stop(): Promise<void>;
}

/** PgBouncer's version line, or undefined when it is not installed. */
export function pgBouncerVersion(): string | undefined {
  if (!existsSync(PGBOUNCER)) return undefined;
  const r = spawnSync(PGBOUNCER, ["--version"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.split("\n")[0]!.trim() : undefined;
}

/** The user PgBouncer runs as when this process is root (it refuses root). */
function unprivileged(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const user of ["postgres", "nobody"]) {
    try {
      const uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
      const gid = Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
      return { uid, gid };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error("PgBouncer refuses to run as root, and neither a postgres nor a nobody user exists to run it as");
}

/** A free port on a random 127.0.0.x address (x in 2..250), so that runs side by side never collide. */
async function freeLoopback(): Promise<{ host: string; port: number }> {
  const host = `127.0.0.${2 + Math.floor(Math.random() * 249)}`;
  const port = await new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.listen(0, host, () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
    s.on("error", reject);
  });
  return { host, port };
}

function answers(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = connect(port, host, () => {
      s.end();
      done(true);
    });
    s.on("error", () => done(false));
  });
}

const live = new Set<ChildProcess>();
let hooked = false;

/** Starts PgBouncer and waits until it accepts connections; throws with its log if it does not. */
export async function startPgBouncer(o: PgBouncerOptions): Promise<PgBouncer> {
  const server = new URL(o.serverUrl);
  const { host, port } = await freeLoopback();
  const dir = mkdtempSync(join(tmpdir(), "ls-pgbouncer-"));
  const userlist = o.users.map((u) => `"${u}" ""`).join("\n") + "\n";
  const ini = [
    "[databases]",
    `* = host=${server.hostname} port=${server.port || "5432"}`,
    "[pgbouncer]",
    `listen_addr = ${host}`,
    `listen_port = ${port}`,
    "unix_socket_dir =",
    "auth_type = trust",
    `auth_file = ${join(dir, "userlist.txt")}`,
    `pool_mode = ${o.poolMode ?? "transaction"}`,
    `default_pool_size = ${o.poolSize ?? 3}`,
    `max_client_conn = ${o.maxClientConn ?? 1000}`,
    `server_round_robin = ${o.serverRoundRobin ? 1 : 0}`,
    "",
  ].join("\n");
  writeFileSync(join(dir, "userlist.txt"), userlist, { mode: 0o600 });
  writeFileSync(join(dir, "pgbouncer.ini"), ini, { mode: 0o600 });
  const as = unprivileged();
  if (as) for (const f of [".", "userlist.txt", "pgbouncer.ini"]) chownSync(join(dir, f), as.uid, as.gid);

  const child = spawn(PGBOUNCER, [join(dir, "pgbouncer.ini")], {
    stdio: ["ignore", "pipe", "pipe"],
    cwd: dir,
    ...(as ?? {}),
  });
  live.add(child);
  if (!hooked) {
    hooked = true;
    // Never leave a pooler behind, even when the test process ends without its cleanup.
    process.once("exit", () => {
      for (const c of live) c.kill("SIGKILL");
    });
  }
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let gone = false;
  void exited.then(() => {
    gone = true;
    live.delete(child);
  });

  const stop = async () => {
    if (!gone) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await answers(host, port))) {
    if (gone || Date.now() > deadline) {
      await stop();
      throw new Error(`PgBouncer did not start on ${host}:${port}: ${log.trim().split("\n").slice(-5).join(" | ")}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    host,
    port,
    url: (user, database) => `postgresql://${encodeURIComponent(user)}@${host}:${port}/${database}`,
    log: () => log,
    stop,
  };
}
