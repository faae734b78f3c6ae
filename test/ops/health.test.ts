// @module-tag redis
// Health against real dependencies: the test Redis and a migrated PostgreSQL database; an
// unreachable Redis is a closed loopback port, a hung one a TCP server that never answers.
import { createServer, type Server, type Socket } from "node:net";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.ts";
import {
  checkHealth,
  postgresLastSuccess,
  postgresPing,
  redisPing,
  type HealthDeps,
  type RawQuery,
} from "../../src/ops/health.ts";
import { startOpsServer } from "../../src/ops/http-server.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { freePort } from "../support/processes.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

/** A port nothing listens on (it was free a moment ago). */
const closedPort = freePort;

/** Accepts connections and never answers: a hung dependency. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

describe("health", () => {
  let redis: TestRedis;
  let mdb: MigratedDb;
  let pool: pg.Pool;
  let query: RawQuery;
  const extraClients: Redis[] = [];

  beforeAll(async () => {
    redis = await createTestRedis();
    mdb = await createMigratedDb();
    pool = new pg.Pool({ connectionString: mdb.url, max: 2 });
    query = (sql) => pool.query(sql).then((r) => r.rows as unknown[]);
    await mdb.db.$executeRawUnsafe(
      `INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at) VALUES
         ('main', 'bills', 1700000000000, '2026-03-01T10:00:00.123Z'),
         ('main', 'snapshots', 1700000000000, '2026-03-01T10:00:20Z'),
         ('alt', 'bills', 1, '2026-02-01T00:00:00Z')`,
    );
  });
  afterAll(async () => {
    for (const c of extraClients) c.disconnect();
    await pool?.end();
    await mdb?.close();
    await redis?.cleanup();
  });

  function unreachableRedis(port: number): Redis {
    const c = new Redis({
      host: "127.0.0.1",
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    c.on("error", () => {});
    extraClients.push(c);
    return c;
  }

  function deps(over: Partial<HealthDeps> = {}): HealthDeps {
    return {
      redisPing: redisPing(redis.client),
      postgresPing: postgresPing(query),
      lastSuccess: async () => [],
      maxAgeMs: 60_000,
      startedAt: new Date(),
      ...over,
    };
  }

  describe("postgresLastSuccess", () => {
    it("reads updated_at per account and stream from sync_state, through Prisma's raw query", async () => {
      const viaPrisma: RawQuery = (sql) => mdb.db.$queryRawUnsafe<unknown[]>(sql);
      const rows = await postgresLastSuccess(viaPrisma);
      expect(rows).toEqual([
        { account: "alt", stream: "bills", at: new Date("2026-02-01T00:00:00Z") },
        { account: "main", stream: "bills", at: new Date("2026-03-01T10:00:00.123Z") },
        { account: "main", stream: "snapshots", at: new Date("2026-03-01T10:00:20Z") },
      ]);
      // The same through node-postgres.
      expect(await postgresLastSuccess(query)).toEqual(rows);
    });

    it("reports expected streams without a row as never succeeded", async () => {
      const rows = await postgresLastSuccess(query, [
        { account: "main", stream: "bills" },
        { account: "new", stream: "bills" },
      ]);
      expect(rows.find((r) => r.account === "main" && r.stream === "bills")?.at).toEqual(
        new Date("2026-03-01T10:00:00.123Z"),
      );
      expect(rows.find((r) => r.account === "new")).toEqual({ account: "new", stream: "bills", at: null });
      // Only the streams asked for: a paused or removed account's bookmark no longer counts.
      expect(rows).toHaveLength(2);
    });
  });

  describe("checkHealth", () => {
    it("is ok when Redis and PostgreSQL answer and every stream synced recently", async () => {
      const now = new Date("2026-03-01T10:00:30Z");
      const report = await checkHealth(
        deps({
          now: () => now,
          lastSuccess: async () => (await postgresLastSuccess(query)).filter((r) => r.account === "main"),
        }),
      );
      expect(report.checks.map((c) => [c.name, c.ok])).toEqual([
        ["redis", true],
        ["postgres", true],
        ["sync:main/bills", true],
        ["sync:main/snapshots", true],
      ]);
      expect(report.ok).toBe(true);
    });

    it("fails the redis check when Redis is unreachable", async () => {
      const report = await checkHealth(deps({ redisPing: redisPing(unreachableRedis(await closedPort())) }));
      expect(report.ok).toBe(false);
      const failing = report.checks.filter((c) => !c.ok);
      expect(failing).toHaveLength(1);
      expect(failing[0]!.name).toBe("redis");
      expect(failing[0]!.detail).toMatch(/^unreachable: /);
    });

    it("fails the postgres check when PostgreSQL is unreachable", async () => {
      const deadPool = new pg.Pool({
        host: "127.0.0.1",
        port: await closedPort(),
        user: "postgres",
        database: "postgres",
        max: 1,
      });
      try {
        const report = await checkHealth(
          deps({ postgresPing: postgresPing((sql) => deadPool.query(sql).then((r) => r.rows)) }),
        );
        expect(report.ok).toBe(false);
        expect(report.checks.find((c) => c.name === "postgres")).toMatchObject({
          ok: false,
          detail: expect.stringMatching(/ECONNREFUSED/),
        });
        expect(report.checks.find((c) => c.name === "redis")?.ok).toBe(true);
      } finally {
        await deadPool.end();
      }
    });

    it("times out a hung ping instead of hanging", async () => {
      const hung = await silentServer();
      try {
        const client = new Redis({ host: "127.0.0.1", port: hung.port, lazyConnect: true, maxRetriesPerRequest: null });
        client.on("error", () => {});
        extraClients.push(client);
        const started = Date.now();
        const report = await checkHealth(deps({ redisPing: redisPing(client), timeoutMs: 300 }));
        const took = Date.now() - started;
        expect(took).toBeGreaterThanOrEqual(290);
        expect(took).toBeLessThan(2000);
        expect(report.ok).toBe(false);
        expect(report.checks.find((c) => c.name === "redis")).toEqual({
          name: "redis",
          ok: false,
          detail: "unreachable: redis timed out after 300 ms",
        });
      } finally {
        await hung.close();
      }
    });

    it("fails a stream whose last success is older than maxAgeMs, naming it", async () => {
      const now = new Date("2026-03-01T10:05:00.123Z");
      const report = await checkHealth(
        deps({
          now: () => now,
          maxAgeMs: 290_000,
          lastSuccess: async () => (await postgresLastSuccess(query)).filter((r) => r.account === "main"),
        }),
      );
      expect(report.ok).toBe(false);
      expect(report.checks.filter((c) => !c.ok)).toEqual([
        {
          name: "sync:main/bills",
          ok: false,
          detail: "stale: last success 2026-03-01T10:00:00.123Z, 300s ago (limit 290s)",
        },
      ]);
      expect(report.checks.find((c) => c.name === "sync:main/snapshots")?.ok).toBe(true);
    });

    it("fails a stream that never succeeded only once the process is up longer than maxAgeMs", async () => {
      const startedAt = new Date("2026-03-01T12:00:00Z");
      const lastSuccess = () =>
        postgresLastSuccess(query, [{ account: "new", stream: "bills" }]).then((rows) =>
          rows.filter((r) => r.account === "new"),
        );
      const early = await checkHealth(deps({ startedAt, now: () => new Date("2026-03-01T12:00:30Z"), lastSuccess }));
      expect(early.ok).toBe(true);
      expect(early.checks.find((c) => c.name === "sync:new/bills")?.detail).toMatch(
        /no success yet; within startup grace/,
      );

      const late = await checkHealth(deps({ startedAt, now: () => new Date("2026-03-01T12:01:01Z"), lastSuccess }));
      expect(late.ok).toBe(false);
      expect(late.checks.find((c) => c.name === "sync:new/bills")).toEqual({
        name: "sync:new/bills",
        ok: false,
        detail: "never succeeded; up 61s (limit 60s)",
      });
    });

    it("fails a sync check when the last successes cannot be read", async () => {
      const report = await checkHealth(
        deps({
          lastSuccess: () =>
            postgresLastSuccess((sql) => pool.query(sql.replace("sync_state", "no_such_table")).then((r) => r.rows)),
        }),
      );
      expect(report.ok).toBe(false);
      expect(report.checks.find((c) => c.name === "sync")).toMatchObject({
        ok: false,
        detail: expect.stringMatching(/could not read last successes: .*no_such_table/),
      });
    });
  });

  describe("/healthz", () => {
    it("is 200 with the report when healthy, 503 with the failing check otherwise", async () => {
      let redisClient: { ping(): Promise<unknown> } = redis.client;
      let now = new Date("2026-03-01T10:00:40Z");
      const server = await startOpsServer({
        port: 0,
        host: "127.0.0.1",
        metrics: createMetrics({ defaultMetrics: false }),
        health: () =>
          checkHealth({
            redisPing: () => redisPing(redisClient)(),
            postgresPing: postgresPing(query),
            lastSuccess: async () => (await postgresLastSuccess(query)).filter((r) => r.account === "main"),
            maxAgeMs: 60_000,
            startedAt: new Date("2026-03-01T09:00:00Z"),
            now: () => now,
          }),
        logger: createLogger("silent"),
      });
      try {
        const ok = await fetch(`${server.url}/healthz`);
        expect(ok.status).toBe(200);
        expect(ok.headers.get("content-type")).toMatch(/^application\/json/);
        const body = (await ok.json()) as { ok: boolean; checks: { name: string; ok: boolean }[] };
        expect(body.ok).toBe(true);
        expect(body.checks.map((c) => c.name)).toEqual(["redis", "postgres", "sync:main/bills", "sync:main/snapshots"]);

        redisClient = unreachableRedis(await closedPort());
        const down = await fetch(`${server.url}/healthz`);
        expect(down.status).toBe(503);
        const downBody = (await down.json()) as {
          ok: boolean;
          checks: { name: string; ok: boolean; detail: string }[];
        };
        expect(downBody.ok).toBe(false);
        expect(downBody.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual(["redis"]);

        redisClient = redis.client;
        now = new Date("2026-03-01T10:30:00Z");
        const stale = await fetch(`${server.url}/healthz`);
        expect(stale.status).toBe(503);
        const staleBody = (await stale.json()) as { checks: { name: string; ok: boolean; detail: string }[] };
        expect(staleBody.checks.filter((c) => !c.ok).map((c) => c.name)).toEqual([
          "sync:main/bills",
          "sync:main/snapshots",
        ]);
        expect(staleBody.checks.find((c) => c.name === "sync:main/bills")?.detail).toMatch(/^stale: /);
      } finally {
        await server.close();
      }
    });

    it("is 503 when the health function itself throws", async () => {
      const server = await startOpsServer({
        port: 0,
        host: "127.0.0.1",
        metrics: createMetrics({ defaultMetrics: false }),
        health: async () => {
          throw new Error("boom");
        },
        logger: createLogger("silent"),
      });
      try {
        const res = await fetch(`${server.url}/healthz`);
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual({
          ok: false,
          checks: [{ name: "health", ok: false, detail: "health check failed: boom" }],
        });
      } finally {
        await server.close();
      }
    });
  });
});
