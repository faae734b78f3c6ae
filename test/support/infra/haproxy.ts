// HAProxy (Debian's 2.6) in TCP mode in front of a PostgreSQL server, as a cloud load balancer sits
// in front of a managed one: it cuts a connection that has been idle for `timeout client` /
// `timeout server`. Started in the foreground (-db) on a free loopback port; its TCP log goes to
// its stdout, one line per closed session, so a scenario can count the sessions it cut.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitForPort } from "../../../src/local-services/free-port.ts";
import { freePort } from "../processes.ts";

export const HAPROXY = "/usr/sbin/haproxy";

/** HAProxy's version line, or undefined when it is not installed. */
export function haproxyVersion(): string | undefined {
  if (!existsSync(HAPROXY)) return undefined;
  const r = spawnSync(HAPROXY, ["-v"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.split("\n")[0]?.trim() : undefined;
}

export interface HaProxy {
  port: number;
  /** Sessions HAProxy closed because one side was idle for its timeout (termination state cD or sD). */
  idleCuts(): number;
  /** Sessions it logged in all. */
  sessions(): number;
  stop(): Promise<void>;
}

/** HAProxy on 127.0.0.1, forwarding to 127.0.0.1:`serverPort`, cutting sessions idle `idleSeconds`. */
export async function startHaProxy(serverPort: number, idleSeconds: number): Promise<HaProxy> {
  const dir = mkdtempSync(join(tmpdir(), "ls-haproxy-"));
  const port = await freePort();
  const config = join(dir, "haproxy.cfg");
  writeFileSync(
    config,
    [
      "global",
      "  maxconn 2000",
      "  log stdout format raw local0",
      "defaults",
      "  mode tcp",
      "  log global",
      "  option tcplog",
      "  timeout connect 5s",
      `  timeout client ${idleSeconds}s`,
      `  timeout server ${idleSeconds}s`,
      "listen postgres",
      `  bind 127.0.0.1:${port}`,
      `  server pg 127.0.0.1:${serverPort}`,
      "",
    ].join("\n"),
  );
  let out = "";
  const child: ChildProcess = spawn(HAPROXY, ["-db", "-f", config], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise((r) => child.once("exit", r));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  process.once("exit", kill);
  try {
    await waitForPort(port);
  } catch (err) {
    kill();
    throw new Error(`haproxy did not start: ${out.slice(-500)}`, { cause: err });
  }
  // tcplog: "... <Tw>/<Tc>/<Tt> <bytes> <termination state> ...": cD/sD = client/server side idle timeout
  // (two characters in TCP mode, four in HTTP mode).
  const lines = () => out.split("\n").filter((l) => /\spostgres\s/.test(l));
  return {
    port,
    idleCuts: () => lines().filter((l) => /\s[cs]D(--)?\s/.test(l)).length,
    sessions: () => lines().length,
    stop: async () => {
      process.removeListener("exit", kill);
      kill();
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
