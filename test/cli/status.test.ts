// @module-tag redis
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let t: MigratedDb;
let r: TestRedis;
beforeAll(async () => {
  t = await createMigratedDb();
  r = await createTestRedis();
});
afterAll(async () => {
  await t.close();
  await r.cleanup();
});

describe("ledger-sync status", () => {
  it("reports cursor, lag, last success, quarantine, failed jobs and the last error per account and stream", async () => {
    const cursor = Date.now() - 120_000;
    await t.db.$executeRawUnsafe(
      `INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at) VALUES
       ('main', 'bills', $1, now()), ('main', 'snapshots:2', $1, now()), ('main', 'bills-backfill:1-2', 2, now())`,
      cursor,
    );
    await t.db.$executeRawUnsafe(
      `INSERT INTO quarantine (account_name, stream, reason, raw_text, raw_hash, context) VALUES ('main', 'bills', 'bad', '{}', 'h', '{}')`,
    );
    const queue = new Queue("bills", { connection: r.client, prefix: r.prefix });
    const job = await queue.add("bills", { account: "main" });
    // A worker whose job fails, as a failing sync would.
    const { Worker } = await import("bullmq");
    const worker = new Worker(
      "bills",
      async () => {
        throw new Error("exchange refused the request (HTTP 400, code 40012)");
      },
      { connection: r.client.duplicate(), prefix: r.prefix, autorun: true },
    );
    await new Promise<void>((resolve) => worker.on("failed", () => resolve()));
    await worker.close();
    await queue.close();

    const res = await runCli(["status"], { DATABASE_URL: t.url, REDIS_URL: r.url, QUEUE_PREFIX: r.prefix });
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as {
      streams: Record<string, unknown>[];
      backfillWindowsDone: Record<string, number>;
    };
    expect(out.streams.map((s) => s.stream)).toEqual(["bills", "snapshots:2"]);
    expect(out.streams[0]).toMatchObject({
      account: "main",
      cursor: new Date(cursor).toISOString(),
      quarantined: 1,
      failedJobs: 1,
    });
    expect(out.streams[0]!.lagSeconds as number).toBeGreaterThanOrEqual(120);
    expect(out.streams[0]!.lastError).toMatch(/bills: exchange refused the request \(HTTP 400, code 40012\)/);
    expect(out.backfillWindowsDone).toEqual({ main: 1 });
    expect(job.id).toBeDefined();
    // The fleet's list: failed jobs in the queues make the account failing.
    const fleet = JSON.parse(res.stdout) as { accounts: Record<string, unknown>[] };
    expect(fleet.accounts).toEqual([
      expect.objectContaining({
        account: "main",
        state: "failing",
        reasons: ["failed jobs"],
        failedJobs: 1,
        quarantined: 1,
      }),
    ]);
  });
});
