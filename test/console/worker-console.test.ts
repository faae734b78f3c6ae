// The console inside the worker: CONSOLE_ENABLED=true without CONSOLE_TOKEN is refused at start,
// naming the variable, before anything connects (the ops port listens on every interface). On the
// ops server (as boot mounts it; worker-mount.test.ts runs a whole worker) an unknown account is a
// 404 and a failing query a 500 with one fixed sentence: no stack trace, no database address. Its
// connection cannot write even with the owner's credentials.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleAccess, ConsoleTokenRequiredError } from "../../src/console/access.ts";
import { openConsoleDb } from "../../src/console/console-db.ts";
import { openWorkerConsole, type WorkerConsole } from "../../src/console/worker-console.ts";
import { loadConfig } from "../../src/config/index.ts";
import { startWorker } from "../../src/jobs/worker.ts";
import { startOpsServer, type OpsServer } from "../../src/ops/http-server.ts";
import { createMetrics } from "../../src/ops/metrics.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

const logger = pino({ level: "silent" });
const TOKEN = "worker-console-token-0123456789";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t?.close();
});

/** An ops server on loopback with the worker's console mounted, as boot() mounts it. */
async function opsWithConsole(databaseUrl: string): Promise<{ ops: OpsServer; console: WorkerConsole }> {
  const mounted = openWorkerConsole(databaseUrl, consoleAccess("0.0.0.0", TOKEN), logger);
  const ops = await startOpsServer({
    port: 0,
    host: "127.0.0.1",
    metrics: createMetrics({ defaultMetrics: false }),
    health: async () => ({ ok: true, checks: [] }),
    logger,
    console: mounted,
  });
  return { ops, console: mounted };
}

describe("the worker's console", () => {
  it("is refused at start without CONSOLE_TOKEN, before anything connects", async () => {
    const config = loadConfig({
      CONSOLE_ENABLED: "true",
      // Nothing listens on port 1: a connection attempt would fail differently, and later.
      DATABASE_URL: "postgresql://nobody@127.0.0.1:1/none",
      REDIS_URL: "redis://127.0.0.1:1",
      EXCHANGE_API_KEY: "k",
      EXCHANGE_API_SECRET: "s",
      EXCHANGE_API_PASSPHRASE: "p",
    });
    const started = startWorker(config, logger);
    await expect(started).rejects.toBeInstanceOf(ConsoleTokenRequiredError);
    await expect(started).rejects.toThrow(/^CONSOLE_TOKEN is required: the console would listen on 0\.0\.0\.0/);
  });

  it("answers an unknown account with 404 in the console's words", async () => {
    const { ops, console: mounted } = await opsWithConsole(t.url);
    try {
      const missing = await fetch(`${ops.url}/console/accounts/nobody`, {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      expect(missing.status).toBe(404);
      expect(await missing.text()).toContain("no account named &quot;nobody&quot; in this database");
    } finally {
      await ops.close();
      await mounted.close();
    }
  });

  it("answers a failing query with 500 and a fixed sentence, no stack and no address", async () => {
    const { ops, console: mounted } = await opsWithConsole("postgresql://ledger:hunter2@127.0.0.1:1/books");
    try {
      const r = await fetch(`${ops.url}/console/`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(r.status).toBe(500);
      const body = await r.text();
      expect(body).toContain("the console could not answer this request; the reason is in the server&#39;s log");
      expect(body).not.toMatch(/hunter2|127\.0\.0\.1:1|ECONNREFUSED|\n\s+at /);
    } finally {
      await ops.close();
      await mounted.close();
    }
  });

  it("cannot write through its connection, even with the owner's credentials", async () => {
    const db = openConsoleDb(t.url);
    try {
      await expect(
        db.$executeRawUnsafe(
          "INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at) VALUES ('x', 'y', 1, now())",
        ),
      ).rejects.toThrow(/read-only transaction/);
    } finally {
      await db.$disconnect();
    }
  });
});
