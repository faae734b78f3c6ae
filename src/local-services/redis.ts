// A local Redis for the demo, the tests and the benchmarks: the system redis-server on a free
// loopback port in a temporary directory. Root may install it with apt (the project's machines are
// Debian); anyone else is told how to get one. CI passes TEST_REDIS_URL instead.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalServiceError } from "./errors.ts";
import { freePort, waitForPort } from "./free-port.ts";
import { OWN_GROUP, spawnOwned, stopChild } from "./owned-process.ts";

export interface RedisHandle {
  url: string;
  stop(): Promise<void>;
}

export function hasRedisServer(): boolean {
  return spawnSync("redis-server", ["--version"], { ...OWN_GROUP, stdio: "ignore" }).status === 0;
}

/** Why no redis-server can be had here, or undefined when one is installed or root can install it. */
export function redisUnavailable(): string | undefined {
  if (hasRedisServer() || process.getuid?.() === 0) return undefined;
  return "redis-server is not installed, and only root can install it";
}

export function ensureRedisServerInstalled(log: (line: string) => void = console.log): void {
  const why = redisUnavailable();
  if (why)
    throw new LocalServiceError(
      why,
      "install it (Debian: sudo apt-get install -y redis-server), " +
        "or set REDIS_URL (tests: TEST_REDIS_URL) to a Redis of your own",
    );
  if (hasRedisServer()) return;
  log("installing redis-server with apt-get (not found on this machine)");
  try {
    execFileSync(
      "sh",
      [
        "-c",
        "apt-get update -qq && " +
          "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null",
      ],
      { ...OWN_GROUP, stdio: ["ignore", "ignore", "pipe"] },
    );
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? "")
      .trim()
      .split("\n")
      .at(-1);
    throw new LocalServiceError(
      `installing redis-server with apt-get failed (${stderr || (err as Error).message})`,
      "install it yourself, or set REDIS_URL (tests: TEST_REDIS_URL) to a Redis of your own",
    );
  }
}

export async function startRedisServer(log: (line: string) => void = console.log): Promise<RedisHandle> {
  ensureRedisServerInstalled(log);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "ledger-sync-redis-"));
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
    "--maxmemory-policy",
    "noeviction",
  ];
  const { child, disown } = spawnOwned("redis-server", args, { stdio: "ignore", deathSignal: "SIGTERM" });
  const failed = new Promise<never>((_, reject) => {
    child.once("error", (err) => reject(err));
    child.once("exit", (code, signal) => reject(new Error(`it exited (${code ?? signal})`)));
  });
  try {
    await Promise.race([waitForPort(port), failed]);
  } catch (err) {
    disown();
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    throw new LocalServiceError(
      `redis-server did not start on 127.0.0.1:${port} (${(err as Error).message})`,
      "run `redis-server --port 6390` by hand to see why, or set REDIS_URL (tests: TEST_REDIS_URL)",
    );
  }
  failed.catch(() => undefined);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      await stopChild(child, "SIGTERM", 10_000);
      disown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
