// @module-tag redis
// A worker signalled while it is still booting: SIGTERM is not Node's default kill at that point,
// but an ordered shutdown once boot ends, or, when boot cannot end (Redis unreachable), exit 1 after
// SHUTDOWN_TIMEOUT_MS. Boot is held at a chosen moment by a loopback TCP gate in front of Redis that
// accepts connections but passes no bytes until opened.
import { createServer, Socket, type Server } from "node:net";
import { describe, expect, it } from "vitest";
import { sandboxExchangeEnv } from "../../src/sandbox/index.ts";
import { freePort, startCli, waitFor, type Proc } from "../support/processes.ts";
import { useWorkerServices } from "../support/worker-services.ts";

interface RedisGate {
  url: string;
  open(): void;
  close(): Promise<void>;
}

/** A TCP gate in front of `target`: connections are accepted at once; bytes flow only after open(). */
async function startRedisGate(target: URL): Promise<RedisGate> {
  const port = await freePort();
  let opened = false;
  const waiting: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.pause();
    const connect = () => {
      const upstream = new Socket();
      sockets.add(upstream);
      upstream.connect(Number(target.port), target.hostname, () => {
        client.pipe(upstream).pipe(client);
        client.resume();
      });
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
      client.on("close", () => upstream.destroy());
    };
    if (opened) connect();
    else waiting.push(connect);
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  const url = new URL(target);
  url.port = String(port);
  return {
    url: url.toString(),
    open() {
      opened = true;
      for (const c of waiting.splice(0)) c();
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const services = useWorkerServices(77);

const lines = (p: Proc) =>
  p
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { msg: string });
const logged = (p: Proc, msg: string) => lines(p).some((l) => l.msg === msg);

async function startGatedWorker(gate: RedisGate, extra: Record<string, string> = {}): Promise<Proc> {
  const worker = startCli(["worker"], {
    ...sandboxExchangeEnv(),
    ACCOUNT_NAME: "signals",
    EXCHANGE_BASE_URL: services.sandbox.url,
    DATABASE_URL: services.database.url,
    REDIS_URL: gate.url,
    QUEUE_PREFIX: services.redis.prefix,
    METRICS_PORT: String(await freePort()),
    LOG_LEVEL: "info",
    ...extra,
  });
  await waitFor("the worker's 'worker starting' line", async () => logged(worker, "worker starting"), 60_000, 50);
  return worker;
}

describe("worker signals during boot", () => {
  it("SIGTERM while boot waits on Redis: the worker finishes booting, then shuts down in order and exits 0", async () => {
    const gate = await startRedisGate(new URL(services.redis.url));
    const worker = await startGatedWorker(gate);
    try {
      worker.signal("SIGTERM");
      await waitFor(
        "the worker to note the signal",
        async () => logged(worker, "signal during start-up: shutting down once started"),
        10_000,
        50,
      );
      expect(logged(worker, "job schedulers reconciled"), "boot was still held at the Redis gate").toBe(false);
      gate.open();
      expect(await worker.exited, worker.output().slice(-3000)).toBe(0);
      const order = lines(worker).map((l) => l.msg);
      const at = (m: string) => order.indexOf(m);
      expect(at("signal during start-up: shutting down once started")).toBeGreaterThan(-1);
      expect(at("worker started")).toBeGreaterThan(at("signal during start-up: shutting down once started"));
      expect(at("shutting down: no new jobs; waiting for running ones")).toBeGreaterThan(at("worker started"));
      expect(at("shut down cleanly")).toBeGreaterThan(at("shutting down: no new jobs; waiting for running ones"));
    } finally {
      worker.signal("SIGKILL");
      await gate.close();
    }
  }, 90_000);

  it("SIGTERM while boot cannot end (Redis never answers): exit 1 after SHUTDOWN_TIMEOUT_MS, with one line saying so", async () => {
    const gate = await startRedisGate(new URL(services.redis.url));
    const worker = await startGatedWorker(gate, { SHUTDOWN_TIMEOUT_MS: "1000" });
    try {
      worker.signal("SIGTERM");
      expect(await worker.exited, worker.output().slice(-3000)).toBe(1);
      expect(
        lines(worker).filter((l) => l.msg.startsWith("start-up did not finish within SHUTDOWN_TIMEOUT_MS")),
      ).toHaveLength(1);
      expect(logged(worker, "worker started")).toBe(false);
    } finally {
      worker.signal("SIGKILL");
      await gate.close();
    }
  }, 90_000);
});
