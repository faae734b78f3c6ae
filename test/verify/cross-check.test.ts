// The cross-check against the sandbox (both endpoints over the same history) and a real
// PostgreSQL: a clean copy passes through either endpoint; a bill deleted from the store, a bill
// altered, and a bill one endpoint does not serve are each found by id; the run is recorded; the
// CLI exits 1 on a difference.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { crossCheck } from "../../src/verify/cross-check.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { syncFromSandbox } from "../support/sandbox-sync.ts";
import { tamper } from "../support/tamper.ts";

let t: MigratedDb;
let sandbox: Sandbox;
beforeAll(async () => {
  t = await createMigratedDb();
  sandbox = await startSandbox({ seed: 31, billCount: 1200, limits: null });
});
afterAll(async () => {
  await sandbox.close();
  await t.close();
});

async function check(account: string, source: "v2" | "v3") {
  const client = sandboxClient(sandbox);
  const truth = sandbox.truth();
  try {
    return await crossCheck({
      db: t.db,
      client,
      logger: pino({ level: "silent" }),
      account,
      source,
      fromMs: truth[0]!.cTimeMs,
      toMs: truth.at(-1)!.cTimeMs,
    });
  } finally {
    await client.close();
  }
}

describe("cross-check", () => {
  it("passes a clean copy read through either endpoint, and records the run", async () => {
    await syncFromSandbox(t.db, sandbox, "clean", { source: "v2" });
    for (const source of ["v3", "v2"] as const) {
      const r = await check("clean", source);
      expect(r).toMatchObject({
        ok: true,
        exchangeBills: 1200,
        storedBills: 1200,
        missingInStore: [],
        missingOnExchange: [],
        different: [],
      });
    }
    const runs = await t.db.$queryRawUnsafe<{ outcome: string; records_fetched: number }[]>(
      "SELECT outcome, records_fetched FROM sync_runs WHERE account_name = 'clean' AND stream = 'cross-check'",
    );
    expect(runs).toEqual([
      { outcome: "ok", records_fetched: 1200 },
      { outcome: "ok", records_fetched: 1200 },
    ]);
  });

  it("finds a bill deleted from the store, a bill altered, and a bill one endpoint does not serve", async () => {
    await syncFromSandbox(t.db, sandbox, "bad", { source: "v2" });
    const truth = sandbox.truth();
    const [deleted, altered, v3Only] = [truth[100]!, truth[200]!, truth[300]!];
    await tamper(t.db, "DELETE FROM bills WHERE account_name = 'bad' AND bill_id = $1", deleted.billId);
    await tamper(
      t.db,
      "UPDATE bills SET amount = amount + 1 WHERE account_name = 'bad' AND bill_id = $1",
      altered.billId,
    );
    sandbox.hideBill(v3Only.billId, "v3");
    try {
      const r = await check("bad", "v3");
      expect(r.ok).toBe(false);
      expect(r.missingInStore).toEqual([deleted.billId]);
      expect(r.missingOnExchange).toEqual([v3Only.billId]);
      expect(r.different).toEqual([
        { billId: altered.billId, fields: [{ field: "amount", stored: expect.any(String), exchange: altered.amount }] },
      ]);
      const run = await t.db.$queryRawUnsafe<{ outcome: string; error: string }[]>(
        "SELECT outcome, error FROM sync_runs WHERE account_name = 'bad' AND stream = 'cross-check'",
      );
      expect(run).toEqual([
        {
          outcome: "failed",
          error: "1 missing in the store, 1 missing on the exchange, 1 different (read through v3)",
        },
      ]);

      // From the CLI: the account's BILLS_SOURCE is v2, so it reads v3; exit 1, ids named.
      const env = { DATABASE_URL: t.url, ...sandboxExchangeEnv(sandbox.url), ACCOUNT_NAME: "bad" };
      const cli = await runCli(
        [
          "verify",
          "--cross-check",
          "--json",
          "--from",
          String(truth[0]!.cTimeMs),
          "--to",
          String(truth.at(-1)!.cTimeMs),
        ],
        env,
      );
      expect(cli.code, cli.stderr).toBe(1);
      const out = JSON.parse(cli.stdout) as {
        ok: boolean;
        crossChecks: { source: string; missingInStore: string[] }[];
      };
      expect(out.ok).toBe(false);
      expect(out.crossChecks[0]).toMatchObject({ source: "v3", missingInStore: [deleted.billId] });
    } finally {
      sandbox.revealBill(v3Only.billId, "v3");
    }
  });

  it("runs as the worker's scheduled job over the last day up to the bookmark, and shows in status", async () => {
    const { processCrossCheck } = await import("../../src/jobs/processors/cross-check.ts");
    const { readStoreStatus } = await import("../../src/store/status.ts");
    const { createMetrics } = await import("../../src/ops/metrics.ts");
    const { loadConfig } = await import("../../src/config/index.ts");
    const { DEFAULT_SANDBOX_CREDENTIALS } = await import("../../src/sandbox/index.ts");
    await syncFromSandbox(t.db, sandbox, "job", { source: "v2" });
    const client = sandboxClient(sandbox);
    try {
      const ctx = {
        config: loadConfig({ DATABASE_URL: t.url }),
        db: t.db,
        // The cross-check takes no account lock.
        leases: undefined as never,
        redis: undefined as never,
        accounts: new Map([
          [
            "job",
            {
              account: {
                name: "job",
                coinIds: [],
                backfillFromMs: 0,
                credentials: DEFAULT_SANDBOX_CREDENTIALS,
                billsSource: "v2" as const,
              },
              client,
              stopped: new AbortController().signal,
            },
          ],
        ]),
        logger: pino({ level: "silent" }),
        metrics: createMetrics({ defaultMetrics: false }),
        forceStop: new AbortController().signal,
      };
      const out = await processCrossCheck(ctx, { data: { account: "job" } } as never);
      expect(out).toMatchObject({ ok: true, source: "v3" });
      const status = await readStoreStatus(t.db);
      const mine = status.crossChecks.find((c) => c.account === "job")!;
      expect(mine).toMatchObject({ outcome: "ok", error: null });
      expect(mine.toMs! - mine.fromMs!).toBe(86_400_000);
      const bad = status.crossChecks.find((c) => c.account === "bad")!;
      expect(bad.error).toBe("1 missing in the store, 1 missing on the exchange, 1 different (read through v3)");
    } finally {
      await client.close();
    }
  });
});
