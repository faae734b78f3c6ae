// docker-compose.yml cannot run here (no Docker engine), so check what can be checked: it parses,
// every variable it sets for a ledger-sync service is one the configuration accepts, and
// `docker compose up -d --scale worker=4` has nothing that clashes between replicas.
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { envSchema } from "../../src/config/env-schema.ts";

interface Service {
  build?: unknown;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test?: string[] };
  ports?: (string | { published?: string | number; target?: number; host_ip?: string })[];
  container_name?: string;
  secrets?: unknown;
  stop_grace_period?: string;
}

/** The value compose gives `${VAR:-default}` when VAR is unset: the default. */
const substitute = (v: unknown) => String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1");

/** Seconds of a compose duration such as "45s", "1m30s". */
function durationSeconds(text: string): number {
  const parts = [...text.matchAll(/([0-9]+)(h|m|s)/g)];
  expect(parts.map((p) => p[0]).join(""), `duration ${text}`).toBe(text);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * { h: 3600, m: 60, s: 1 }[unit as "h" | "m" | "s"], 0);
}

describe("docker-compose.yml", () => {
  const compose = parse(readFileSync("docker-compose.yml", "utf8"), { merge: true }) as {
    services: Record<string, Service>;
  };
  const ours = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);

  it("has postgres 16+, redis 7 (AOF, noeviction) and a worker from the Dockerfile, all with healthchecks", () => {
    expect(Number(/postgres:(\d+)/.exec(compose.services.postgres!.image!)![1])).toBeGreaterThanOrEqual(16);
    expect(compose.services.redis!.image).toBe("redis:7");
    expect(compose.services.redis!.command).toEqual(
      expect.arrayContaining(["--appendonly", "yes", "--maxmemory-policy", "noeviction"]),
    );
    expect(compose.services.worker!.command).toEqual(["worker"]);
    for (const name of ["postgres", "redis", "worker"]) expect(compose.services[name]!.healthcheck, name).toBeDefined();
    expect(ours.map(([name]) => name).sort()).toEqual(["migrate", "worker"]);
  });

  it("sets only variables the configuration accepts, and they validate", () => {
    const known = new Set(Object.keys(envSchema.shape));
    for (const [name, service] of ours) {
      const env = service.environment ?? {};
      expect(Object.keys(env).length, name).toBeGreaterThan(5);
      for (const key of Object.keys(env)) expect(known.has(key), `${name}: ${key}`).toBe(true);
      // With the ${VAR:-default} defaults substituted, the configuration accepts the values.
      const substituted = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, substitute(v)]));
      expect(
        envSchema.safeParse(substituted).success,
        JSON.stringify(envSchema.safeParse(substituted).error?.issues),
      ).toBe(true);
    }
  });

  const worker = compose.services.worker!;
  // The worker's configuration, or the defaults when it is invalid (the test above says why).
  const workerParsed = envSchema.safeParse(
    Object.fromEntries(Object.entries(worker.environment ?? {}).map(([k, v]) => [k, substitute(v)])),
  );
  const workerEnv = workerParsed.success ? workerParsed.data : envSchema.parse({});

  it("scales: no fixed name, and each replica's metrics port is one of a loopback range", () => {
    for (const [name, service] of ours) expect(service.container_name, name).toBeUndefined();
    const ports = worker.ports ?? [];
    expect(ports.length).toBeGreaterThan(0);
    for (const port of ports) {
      // Short syntax only: host_ip:first-last:container.
      expect(typeof port, JSON.stringify(port)).toBe("string");
      const m = /^127\.0\.0\.1:([0-9]+)-([0-9]+):([0-9]+)$/.exec(port as string);
      expect(m, `${String(port)}: a loopback host port range, so that --scale gets a port per replica`).not.toBeNull();
      const [first, last, target] = [Number(m![1]), Number(m![2]), Number(m![3])];
      expect(last - first + 1, "replicas the range has room for").toBeGreaterThanOrEqual(4);
      expect(target).toBe(workerEnv.METRICS_PORT);
    }
    // The healthcheck runs inside each container: the container's own port, whatever the host's.
    expect(worker.healthcheck!.test!.join(" ")).toContain(`http://127.0.0.1:${workerEnv.METRICS_PORT}/healthz`);
  });

  it("passes the fleet's settings through, with defaults that work without them", () => {
    const env = worker.environment!;
    expect(env.LEDGER_SYNC_MASTER_KEY).toBe("${LEDGER_SYNC_MASTER_KEY:-}");
    expect(env.LEDGER_SYNC_MASTER_KEY_FILE).toBe("${LEDGER_SYNC_MASTER_KEY_FILE:-}");
    expect(env.DATABASE_POOL_MAX).toMatch(/^\$\{DATABASE_POOL_MAX:-[0-9]+\}$/);
    expect(env.WORKER_CONCURRENCY).toMatch(/^\$\{WORKER_CONCURRENCY:-[0-9]+\}$/);
    // Replicas on one host share its public IP, hence one EGRESS_ID unless told otherwise.
    expect(substitute(env.EGRESS_ID)).toBe("compose");
    // A secret file compose would refuse to start without is only an example, not required.
    for (const [name, service] of ours) expect(service.secrets, name).toBeUndefined();
    expect((compose as { secrets?: unknown }).secrets).toBeUndefined();
  });

  it("lets running jobs finish: the stop grace period exceeds SHUTDOWN_TIMEOUT_MS", () => {
    expect(durationSeconds(worker.stop_grace_period!) * 1000).toBeGreaterThan(workerEnv.SHUTDOWN_TIMEOUT_MS);
  });
});
