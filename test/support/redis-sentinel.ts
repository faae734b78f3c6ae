// A Redis Sentinel deployment of a test's own on loopback: a master, a replica (replicaof) and one or
// three sentinels watching them with a short down-after-milliseconds, each on a free port in one
// temporary directory, all noeviction and without persistence. The sentinels are redis-server in
// sentinel mode (`redis-server <file> --sentinel`), so nothing beyond Debian's redis-server is needed.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, waitForPort } from "../../src/local-services/free-port.ts";
import { exited, spawnOwned, stopChild } from "../../src/local-services/owned-process.ts";

export interface SentinelNode {
  port: number;
  child: ChildProcess;
}

export interface RedisSentinelSet {
  /** The master group's name the sentinels monitor. */
  name: string;
  /** REDIS_SENTINELS: host:port,host:port. */
  sentinels: string;
  /** The two data nodes, by port (the master first, as started). */
  nodes: SentinelNode[];
  /** The port of the master the sentinels name now. */
  masterPort(): Promise<number>;
  /** `SENTINEL FAILOVER <name>` (a graceful switch, the old master becomes a replica). */
  failover(): Promise<void>;
  /** kill -9 of the data node on `port`. */
  kill(port: number): Promise<void>;
  /** Resolves once the sentinels name a master other than `port`, or rejects after `timeoutMs`. */
  waitForNewMaster(port: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

const NAME = "ls";

/**
 * Starts the set and resolves once the replica is in sync and every sentinel sees the master and
 * its replica. `downAfterMs` is the sentinels' down-after-milliseconds (a kill is noticed after it).
 */
export async function startRedisSentinel(
  o: { sentinels?: 1 | 3; downAfterMs?: number } = {},
): Promise<RedisSentinelSet> {
  const count = o.sentinels ?? 1;
  const downAfterMs = o.downAfterMs ?? 1000;
  const dir = mkdtempSync(join(tmpdir(), "ls-redis-sentinel-"));
  const children: { child: ChildProcess; disown(): void }[] = [];
  const spawnServer = async (args: string[], port: number): Promise<ChildProcess> => {
    const owned = spawnOwned("redis-server", args, { stdio: "ignore", deathSignal: "SIGTERM" });
    children.push(owned);
    const gone = new Promise<never>((_, reject) =>
      owned.child.once("exit", (code, signal) => reject(new Error(`redis-server exited (${code ?? signal})`))),
    );
    gone.catch(() => undefined);
    await Promise.race([waitForPort(port), gone]);
    return owned.child;
  };
  const stop = async () => {
    await Promise.all(children.map(async (c) => stopChild(c.child, "SIGTERM", 5000).finally(() => c.disown())));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const data = async (port: number, extra: string[]) => {
      const base = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"];
      const args = [...base, "--maxmemory-policy", "noeviction", "--dbfilename", `dump-${port}.rdb`, ...extra];
      return { port, child: await spawnServer(args, port) };
    };
    const masterPort = await freePort();
    const master = await data(masterPort, []);
    const replica = await data(await freePort(), ["--replicaof", "127.0.0.1", String(masterPort)]);
    await until(
      async () => (await info(replica.port, "replication")).includes("master_link_status:up"),
      20_000,
      "the replica did not sync with the master",
    );
    const sentinelPorts: number[] = [];
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const file = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        file,
        [
          `port ${port}`,
          "bind 127.0.0.1",
          `dir ${dir}`,
          `sentinel monitor ${NAME} 127.0.0.1 ${masterPort} ${count === 1 ? 1 : 2}`,
          `sentinel down-after-milliseconds ${NAME} ${downAfterMs}`,
          `sentinel failover-timeout ${NAME} 5000`,
          `sentinel parallel-syncs ${NAME} 1`,
          "",
        ].join("\n"),
      );
      await spawnServer([file, "--sentinel"], port);
      sentinelPorts.push(port);
    }
    const ask = async <T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> => {
      const r = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 1, lazyConnect: true });
      r.on("error", () => undefined);
      try {
        await r.connect();
        return await fn(r);
      } finally {
        r.disconnect();
      }
    };
    const sentinelMaster = async (): Promise<number> =>
      Number(
        ((await ask(sentinelPorts[0]!, (r) => r.call("SENTINEL", "get-master-addr-by-name", NAME))) as string[])[1],
      );
    // A sentinel can fail over only once it knows the replica (it learns it from the master's INFO).
    await until(
      async () => {
        for (const p of sentinelPorts) {
          const replicas = (await ask(p, (r) => r.call("SENTINEL", "replicas", NAME))) as unknown[];
          if (replicas.length < 1) return false;
        }
        return true;
      },
      20_000,
      "the sentinels did not discover the replica",
    );
    return {
      name: NAME,
      sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(","),
      nodes: [master, replica],
      masterPort: sentinelMaster,
      failover: async () => {
        await ask(sentinelPorts[0]!, (r) => r.call("SENTINEL", "FAILOVER", NAME));
      },
      kill: async (port) => {
        const node = [master, replica].find((n) => n.port === port);
        if (!node) throw new Error(`no data node on port ${port}`);
        const gone = exited(node.child);
        node.child.kill("SIGKILL");
        await gone;
      },
      waitForNewMaster: async (port, timeoutMs = 30_000) => {
        let now = port;
        await until(
          async () => {
            now = await sentinelMaster().catch(() => port);
            return now !== port;
          },
          timeoutMs,
          `the sentinels did not elect a new master within ${timeoutMs} ms`,
        );
        return now;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** INFO <section> of the server on `port` (loopback). */
export async function info(port: number, section: string): Promise<string> {
  const r = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 1, lazyConnect: true });
  r.on("error", () => undefined);
  try {
    await r.connect();
    return await r.info(section);
  } finally {
    r.disconnect();
  }
}

/** Polls `done` every 100 ms until it holds; rejects with `what` after `timeoutMs`. */
export async function until(done: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await done().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`${what} (waited ${timeoutMs} ms)`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
