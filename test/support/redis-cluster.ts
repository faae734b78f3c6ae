// A Redis Cluster of a test's own on loopback: three masters (cluster-enabled yes, no replicas),
// joined by `redis-cli --cluster create ... --cluster-yes`, each on a free port in one temporary
// directory, noeviction and without persistence. Only Debian's redis-server (and its redis-cli).
import { execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort, waitForPort } from "../../src/local-services/free-port.ts";
import { spawnOwned, stopChild } from "../../src/local-services/owned-process.ts";
import { info, until } from "./redis-sentinel.ts";

export interface RedisClusterSet {
  /** redis://127.0.0.1:<port> of the first node: what REDIS_URL names. */
  url: string;
  ports: number[];
  stop(): Promise<void>;
}

/** Starts three masters with `extra` arguments each and resolves once every node says cluster_state:ok. */
export async function startRedisCluster(extra: (i: number) => string[] = () => []): Promise<RedisClusterSet> {
  const dir = mkdtempSync(join(tmpdir(), "ls-redis-cluster-"));
  const children: { child: ChildProcess; disown(): void }[] = [];
  const stop = async () => {
    await Promise.all(children.map(async (c) => stopChild(c.child, "SIGTERM", 5000).finally(() => c.disown())));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const args = [
        ...["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"],
        ...["--dbfilename", `dump-${port}.rdb`, "--maxmemory-policy", "noeviction"],
        ...["--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`],
        ...["--cluster-node-timeout", "2000"],
        ...extra(i),
      ];
      const owned = spawnOwned("redis-server", args, { stdio: "ignore", deathSignal: "SIGTERM" });
      children.push(owned);
      const gone = new Promise<never>((_, reject) =>
        owned.child.once("exit", (code, signal) => reject(new Error(`redis-server exited (${code ?? signal})`))),
      );
      gone.catch(() => undefined);
      await Promise.race([waitForPort(port), gone]);
      ports.push(port);
    }
    await promisify(execFile)(
      "redis-cli",
      ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "0", "--cluster-yes"],
      { timeout: 30_000 },
    );
    await until(
      async () => {
        for (const p of ports) if (!(await info(p, "cluster")).includes("cluster_enabled:1")) return false;
        for (const p of ports) {
          const { stdout } = await promisify(execFile)("redis-cli", ["-p", String(p), "cluster", "info"]);
          if (!stdout.includes("cluster_state:ok")) return false;
        }
        return true;
      },
      30_000,
      "the cluster did not reach cluster_state:ok",
    );
    return { url: `redis://127.0.0.1:${ports[0]}`, ports, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
