// @module-tag redis
// Secrets never appear in output: a full run of every command that touches them, at debug
// level, then the failure paths, and every line of stdout, stderr, /metrics, /healthz and
// `status` searched for the API secret, the passphrase, every ACCESS-SIGN the exchange received,
// and the passwords of DATABASE_URL and REDIS_URL. The database roles are the ones
// docs/security.md prescribes (its GRANT block is executed as written), so this also proves the
// worker's least-privilege grants are enough.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { runCli, type CliResult } from "../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../support/database.ts";
import { freePort, startCli, waitFor } from "../support/processes.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

const tag = randomBytes(3).toString("hex");
const API_KEY = `key-${tag}`;
const SECRET = `SECRET-${tag}-e3b7c1a9`;
const PASSPHRASE = `PASSPHRASE-${tag}-9d42af`;
const OWNER_PASSWORD = `OWNERPW-${tag}-5c8e12`;
const WORKER_PASSWORD = `WORKERPW-${tag}-a71f09`;
const REDIS_PASSWORD = `REDISPW-${tag}-0b3d77`;
const WRONG_SECRET = `WRONGSECRET-${tag}-44d1be`;
const WRONG_PASSPHRASE = `WRONGPASS-${tag}-6e2c90`;
const OWNER = `ls_owner_${tag}`;
const WORKER = `ls_worker_${tag}`;

let database: TestDatabase;
let sandbox: Sandbox;
let proxy: Server;
let proxyUrl: string;
let redis: TestRedis;
/** Every ACCESS-SIGN value the exchange received. */
const signatures = new Set<string>();
/** Everything ledger-sync printed or served, with where it came from. */
const seen: { where: string; text: string }[] = [];

const admin = async <T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
};

function urlFor(base: string, user: string, password: string, db: string): string {
  const u = new URL(base);
  u.username = user;
  u.password = password;
  u.pathname = `/${db}`;
  return u.toString();
}

/** docs/security.md's worker GRANT block, for this test's role and database. */
function workerGrants(): string {
  const doc = readFileSync("docs/security.md", "utf8");
  const block = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)]
    .map((m) => m[1]!)
    .find((b) => b.includes("GRANT USAGE ON ALL SEQUENCES"));
  if (!block) throw new Error("docs/security.md has no worker GRANT block");
  return block
    .replace(/CREATE ROLE ledger_worker[^\n]*\n/, "")
    .replaceAll("ledger_worker", WORKER)
    .replaceAll("DATABASE ledger ", `DATABASE "${database.name}" `);
}

let ownerUrl: string;
let workerUrl: string;
let redisUrl: string;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  const adminUrl = inject("adminDatabaseUrl");
  await admin(adminUrl, async (c) => {
    await c.query(`CREATE ROLE ${OWNER} LOGIN PASSWORD '${OWNER_PASSWORD}'`);
    await c.query(`CREATE ROLE ${WORKER} LOGIN PASSWORD '${WORKER_PASSWORD}'`);
    await c.query(`ALTER DATABASE "${database.name}" OWNER TO ${OWNER}`);
  });
  // PostgreSQL 15+: schema public belongs to the database owner; older servers need it said.
  await admin(
    urlFor(adminUrl, new URL(adminUrl).username, decodeURIComponent(new URL(adminUrl).password), database.name),
    (c) => c.query(`ALTER SCHEMA public OWNER TO ${OWNER}`),
  );
  ownerUrl = urlFor(adminUrl, OWNER, OWNER_PASSWORD, database.name);
  workerUrl = urlFor(adminUrl, WORKER, WORKER_PASSWORD, database.name);

  redis = await createTestRedis();
  const r = new URL(redis.url);
  // A Redis without a password accepts one (ioredis warns and goes on): enough to check it never shows.
  if (!r.password) r.password = REDIS_PASSWORD;
  redisUrl = r.toString();

  sandbox = await startSandbox({
    seed: 71,
    billCount: 1500,
    credentials: { apiKey: API_KEY, apiSecret: SECRET, passphrase: PASSPHRASE },
  });
  // Records every signature on its way to the sandbox.
  const target = new URL(sandbox.url);
  proxy = createServer((req, res) => {
    const sign = req.headers["access-sign"];
    if (typeof sign === "string") signatures.add(sign);
    const out = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

  env = {
    DATABASE_URL: workerUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: redis.prefix,
    EXCHANGE_BASE_URL: proxyUrl,
    EXCHANGE_API_KEY: API_KEY,
    EXCHANGE_API_SECRET: SECRET,
    EXCHANGE_API_PASSPHRASE: PASSPHRASE,
    ACCOUNT_NAME: "secrets",
    SYNC_COIN_IDS: "2,1",
    BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
    LOG_LEVEL: "debug",
  };
});

afterAll(async () => {
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await sandbox?.close();
  await redis?.cleanup();
  await database?.drop();
  await admin(inject("adminDatabaseUrl"), async (c) => {
    await c.query(`DROP ROLE IF EXISTS ${WORKER}`);
    await c.query(`DROP ROLE IF EXISTS ${OWNER}`);
  });
});

async function cli(where: string, args: string[], extra: Record<string, string> = {}): Promise<CliResult> {
  const r = await runCli(args, { ...env, ...extra }, 60_000);
  seen.push({ where: `${where} stdout`, text: r.stdout }, { where: `${where} stderr`, text: r.stderr });
  return r;
}

describe("secrets stay out of every output", () => {
  it("migrate (as the owner), then sync --once, snapshot --once and status as the least-privilege worker role, at debug level", async () => {
    const migrate = await cli("migrate", ["migrate"], { DATABASE_URL: ownerUrl });
    expect(migrate.code, migrate.stderr).toBe(0);
    await admin(ownerUrl, (c) => c.query(workerGrants()));

    const sync = await cli("sync", ["sync", "--once", "--json"]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(JSON.parse(sync.stdout)).toMatchObject({
      account: "secrets",
      bills: { inserted: 1500, quarantined: 0 },
      snapshots: { quarantined: 0 },
    });
    // Debug logging was on: the search below looks at real log lines.
    expect(sync.stderr).toMatch(/"level":20,.*"msg":"windows committed"/);

    const snapshot = await cli("snapshot", ["snapshot", "--once"]);
    expect(snapshot.code, snapshot.stderr).toBe(0);
    const status = await cli("status", ["status", "--json"]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).streams.map((s: { stream: string }) => s.stream)).toEqual([
      "bills",
      "snapshots:1",
      "snapshots:2",
    ]);
    expect(signatures.size).toBeGreaterThan(10);
  });

  it("the worker: its logs, /metrics and /healthz while it runs, and its shutdown", async () => {
    const port = await freePort();
    const worker = startCli(["worker"], {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...env,
      ACCOUNT_NAME: "secrets-worker",
      METRICS_PORT: String(port),
      BILLS_INTERVAL_MS: "1000",
      SNAPSHOT_INTERVAL_MS: "1000",
      SHUTDOWN_TIMEOUT_MS: "3000",
    });
    try {
      let metrics = "";
      await waitFor(
        "a completed bills job and a snapshot job in /metrics",
        async () => {
          metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then(
            (r) => r.text(),
            () => "",
          );
          return (
            /ledger_sync_job_duration_seconds_count\{queue="bills",job_name="bills",outcome="completed"\} [1-9]/.test(
              metrics,
            ) && /queue="snapshots",job_name="snapshots",outcome="completed"\} [1-9]/.test(metrics)
          );
        },
        90_000,
      );
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      seen.push({ where: "worker /metrics", text: metrics }, { where: "worker /healthz", text: await health.text() });
      expect(health.status).toBe(200);
      worker.signal("SIGTERM");
      expect(await worker.exited).toBe(0);
    } finally {
      worker.signal("SIGKILL");
      seen.push({ where: "worker output", text: worker.output() });
    }
    expect(worker.output()).toContain("shut down cleanly");
  });

  it("the failure paths: a wrong secret, a wrong passphrase, an unreachable database", async () => {
    const wrongSecret = await cli("sync with a wrong secret", ["sync", "--once"], {
      EXCHANGE_API_SECRET: WRONG_SECRET,
      ACCOUNT_NAME: "wrong-secret",
    });
    expect(wrongSecret.code).toBe(1);
    expect(wrongSecret.stderr).toMatch(/code 40009/);
    const wrongPassphrase = await cli("sync with a wrong passphrase", ["sync", "--once"], {
      EXCHANGE_API_PASSPHRASE: WRONG_PASSPHRASE,
      ACCOUNT_NAME: "wrong-passphrase",
    });
    expect(wrongPassphrase.code).toBe(1);
    expect(wrongPassphrase.stderr).toMatch(/code 40012/);
    const down = new URL(workerUrl);
    down.port = "1";
    const nowhere = down.toString();
    const unreachable = await cli("sync with the database unreachable", ["sync", "--once"], { DATABASE_URL: nowhere });
    expect(unreachable.code, unreachable.stderr).toBe(1);
    expect(unreachable.stderr).toMatch(/127\.0\.0\.1:1/);
  });

  it("no secret, password or signature appears anywhere in what was printed or served", () => {
    const secrets: [string, string][] = [
      ["API secret", SECRET],
      ["passphrase", PASSPHRASE],
      ["wrong secret", WRONG_SECRET],
      ["wrong passphrase", WRONG_PASSPHRASE],
      ["owner's database password", OWNER_PASSWORD],
      ["worker's database password", WORKER_PASSWORD],
      ["Redis password", decodeURIComponent(new URL(redisUrl).password)],
      ...[...signatures].map((s, i): [string, string] => [`signature #${i + 1}`, s]),
    ];
    expect(seen.length).toBe(17);
    const leaks = seen.flatMap(({ where, text }) =>
      secrets.filter(([, value]) => text.includes(value)).map(([what]) => `${what} in ${where}`),
    );
    expect(leaks).toEqual([]);
  });
});
