// docker-compose.yml cannot run here (no Docker engine), so check what can be checked: it parses,
// and every variable it sets for a ledger-sync service is one the configuration accepts.
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { envSchema } from "../../src/config/env-schema.ts";

interface Service {
  build?: unknown;
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: unknown;
}

describe("docker-compose.yml", () => {
  const compose = parse(readFileSync("docker-compose.yml", "utf8"), { merge: true }) as {
    services: Record<string, Service>;
  };
  const ours = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);

  it("has postgres 16+, redis 7 with AOF and noeviction, and a worker built from the Dockerfile, all with healthchecks", () => {
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
      const substituted = Object.fromEntries(
        Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1")]),
      );
      expect(
        envSchema.safeParse(substituted).success,
        JSON.stringify(envSchema.safeParse(substituted).error?.issues),
      ).toBe(true);
    }
  });
});
