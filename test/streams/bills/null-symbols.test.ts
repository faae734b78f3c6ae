// Bills of no contract sent with "symbol": null (the sandbox's nullSymbols, as the live exchange
// sends deposits, withdrawals and transfers), synced through the real CLI from the v2 bills endpoint
// and from the v3 income endpoint into real PostgreSQL: both copies are exact, nothing is
// quarantined, the symbol is NULL (raw keeps the null sent), both sources store the same rows, the
// cross-check through the other endpoint is clean, and the rollups still equal the bills.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../../src/sandbox/index.ts";
import { runCli } from "../../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { asRows, storedBills } from "../../support/sandbox-sync.ts";
import { expectRollupsMatchBills } from "../../store/rollups/checks.ts";

const NO_CONTRACT = ["deposit", "withdraw", "transfer_in", "transfer_out"];

let t: MigratedDb;
let sandbox: Sandbox;
beforeAll(async () => {
  t = await createMigratedDb();
  sandbox = await startSandbox({
    seed: 41,
    billCount: 1500,
    limits: null,
    accountEvolution: "manual",
    nullSymbols: true,
  });
});
afterAll(async () => {
  await sandbox?.close();
  await t?.close();
});

const env = (account: string, source: "v2" | "v3") => ({
  DATABASE_URL: t.url,
  ...sandboxExchangeEnv(sandbox.url),
  ACCOUNT_NAME: account,
  BILLS_SOURCE: source,
  BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
});

describe("bills of no contract sent with symbol null", () => {
  it("the sandbox sends symbol null on v2 and v3 for exactly the deposits, withdrawals and transfers", () => {
    const truth = sandbox.truth();
    const none = truth.filter((b) => b.symbol === "");
    expect(none.length).toBeGreaterThan(20);
    expect(new Set(none.map((b) => b.businessType))).toEqual(new Set(NO_CONTRACT));
    expect(truth.filter((b) => NO_CONTRACT.includes(b.businessType) && b.symbol !== "")).toEqual([]);
  });

  it("sync --once from either endpoint: exit 0, nothing quarantined, an exact copy with NULL symbols", async () => {
    const truth = sandbox.truth();
    for (const source of ["v2", "v3"] as const) {
      const r = await runCli(["sync", "--once", "--json"], env(source, source), 180_000);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ bills: { inserted: truth.length, revised: 0, quarantined: 0 } });
      expect(await storedBills(t.db, source), source).toEqual(asRows(truth));
    }
    const quarantined = await t.db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM quarantine");
    expect(quarantined).toEqual([{ n: 0 }]);

    // The column is NULL exactly for the bills of no contract; raw keeps the null the exchange sent.
    const rows = await t.db.$queryRawUnsafe<{ source: string; business_type: string; raw_symbol: string }[]>(
      `SELECT source, business_type, raw->'symbol' #>> '{}' AS raw_symbol FROM bills WHERE symbol IS NULL`,
    );
    expect(rows.length).toBe(2 * truth.filter((b) => b.symbol === "").length);
    for (const row of rows) {
      expect(NO_CONTRACT).toContain(row.business_type);
      expect(row.raw_symbol).toBeNull();
    }
    const nulls = await t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM bills WHERE raw->'symbol' = 'null'::jsonb",
    );
    expect(nulls).toEqual([{ n: rows.length }]);
    const empty = await t.db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM bills WHERE symbol = ''");
    expect(empty).toEqual([{ n: 0 }]);
  });

  it("both sources stored the same rows", async () => {
    const content = (account: string) =>
      t.db.$queryRawUnsafe<Record<string, string | null>[]>(
        `SELECT bill_id, coin, symbol, business_type, amount::text AS amount, balance::text AS balance,
                fill_fee::text AS fill_fee, created_at_ms::text AS created_at_ms
         FROM bills WHERE account_name = $1 ORDER BY created_at_ms, bill_id::numeric`,
        account,
      );
    const v2 = await content("v2");
    expect(v2.length).toBe(sandbox.truth().length);
    expect(await content("v3")).toEqual(v2);
  });

  it("verify --cross-check through the other endpoint is clean for both", async () => {
    const truth = sandbox.truth();
    for (const source of ["v2", "v3"] as const) {
      const range = ["--from", String(truth[0]!.cTimeMs), "--to", String(truth.at(-1)!.cTimeMs)];
      const r = await runCli(["verify", "--cross-check", "--json", ...range], env(source, source), 180_000);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { ok: boolean; crossChecks: Record<string, unknown>[] };
      expect(out.ok).toBe(true);
      expect(out.crossChecks).toEqual([
        expect.objectContaining({
          source: source === "v2" ? "v3" : "v2",
          exchangeBills: truth.length,
          storedBills: truth.length,
          missingInStore: [],
          missingOnExchange: [],
          different: [],
        }),
      ]);
    }
  });

  it("daily_rollups equals the bills grouped, with one NULL-symbol row per account, day, coin and type", async () => {
    await expectRollupsMatchBills(t.db);
    const [dupes] = await t.db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM daily_rollups WHERE symbol IS NULL
         GROUP BY account_name, day, coin, business_type HAVING count(*) > 1
       ) d`,
    );
    expect(dupes).toEqual({ n: 0 });
    const [nullRows] = await t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM daily_rollups WHERE symbol IS NULL",
    );
    expect(nullRows!.n).toBeGreaterThan(0);
  });
});
