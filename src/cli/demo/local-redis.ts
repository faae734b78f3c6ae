// A local Redis for the demo and the tests: the system redis-server on a free loopback port in a
// temporary directory, installed with apt when missing and running as root (the project's machines
// are Debian); otherwise a clear message on how to get one. CI passes TEST_REDIS_URL instead.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForPort } from "./free-port.ts";

export interface RedisHandle {
  url: string;
  stop(): Promise<void>;
}

function hasRedisServer(): boolean {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export function ensureRedisServerInstalled(log: (line: string) => void = console.log): void {
  if (hasRedisServer()) return;
  if (process.getuid?.() !== 0) throw new Error("redis-server is not installed: install it (Debian: sudo apt-get install -y redis-server) or set REDIS_URL");
  log("installing redis-server with apt-get (not found on this machine)");
  execFileSync("sh", ["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null"], { stdio: "inherit" });
}

export async function startRedisServer(log: (line: string) => void = console.log): Promise<RedisHandle> {
  ensureRedisServerInstalled(log);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "ledger-sync-redis-"));
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction"], { stdio: "ignore" });
  const url = `redis://127.0.0.1:${port}`;
  try {
    await waitForPort(port);
  } catch (err) {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`redis-server did not start on port ${port}: ${(err as Error).message}`);
  }
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
