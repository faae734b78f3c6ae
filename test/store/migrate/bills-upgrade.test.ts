// The upgrade of a populated database to issue 32's bill_rows (src/store/migrate/copy-bills.ts, the
// data step of 20261127200000_bill_rows, and src/periods/upgrade-closes-check.ts, that of
// 20261127200100_bills_view). Books written the old way over several accounts and months (no
// symbol, transfer reasons, raws with fields no column holds, ids beyond 2^64, a revision, v2 and
// v3 items, a raw that is no object, closed periods: one closed again, one changed since its close)
// are migrated with batches of 97 bills; the first migrate is stopped mid-copy, the second resumes
// it. Afterwards every bill reads through the view as it was, the closed periods digest as before,
// the rollups and revisions are untouched, and the view takes a write.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closesCheckStep } from "../../../src/periods/upgrade-closes-check.ts";
import type { CopiedBatch } from "../../../src/store/migrate/copy-bills-batch.ts";
import type { CopyBillsOptions } from "../../../src/store/migrate/copy-bills.ts";
import { BILL_ROWS_MIGRATION, BILLS_VIEW_MIGRATION, dataSteps } from "../../../src/store/migrate/data-steps.ts";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { takeLease } from "../../../src/store/run-lease.ts";
import { runCli } from "../../support/cli.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import {
  ALL_BILLS,
  ALL_REVISIONS,
  ALL_ROLLUPS,
  closeMonth,
  digestNow,
  insertOldBills,
  migrateToOldSchema,
  MONTH_MS,
  reviseBill,
  withClient,
  type OldAccount,
} from "./old-books.ts";

const BATCH = 97;
const HOUR = 3_600_000;
const ACCOUNTS: OldAccount[] = [
  { name: "alpha", bills: 1600, fromMs: MONTH_MS(2026, 1), stepMs: 4 * HOUR, source: "v2" },
  { name: "beta", bills: 900, fromMs: MONTH_MS(2026, 2) + 123, stepMs: 6 * HOUR, source: "v3" },
  { name: "gamma", bills: 250, fromMs: MONTH_MS(2025, 11), stepMs: 24 * HOUR, source: "v2" },
];
/** An account the worker knows (a cursor) that has no bill yet: its lease is held too. */
const QUIET = "delta";

/** The steps `ledger-sync migrate` runs, with small batches. */
const steps = (o: CopyBillsOptions) => ({
  ...dataSteps({ batchSize: BATCH, progressEveryMs: 0, ...o }),
  [BILLS_VIEW_MIGRATION]: closesCheckStep(),
});

type Row = Record<string, unknown>;

let db: TestDatabase;
let client: pg.Client;
const q = async <T extends Row = Row>(sql: string, values: unknown[] = []) => (await client.query<T>(sql, values)).rows;
const one = async (sql: string, values: unknown[] = []) => Object.values((await q(sql, values))[0]!)[0];

const before: { bills: Row[]; rollups: Row[]; revisions: Row[]; digests: Map<string, string> } = {
  bills: [],
  rollups: [],
  revisions: [],
  digests: new Map(),
};
const sealed = new Map<string, string>();
const run1 = {
  committed: 0,
  bills: 0,
  error: undefined as Error | undefined,
  leases: [] as Row[],
  busy: "",
  log: [] as string[],
};
const run2 = { batches: 0, log: [] as string[], applied: [] as string[] };

/** The old books: three accounts, a revision, a raw that is no object, closes (one superseded, one stale). */
async function populate(c: pg.Client): Promise<void> {
  for (const [i, a] of ACCOUNTS.entries()) await insertOldBills(c, a, i * 7);
  await c.query(`INSERT INTO sync_state (account_name, stream, cursor_ms) VALUES ($1, 'bills', 0)`, [QUIET]);
  await c.query(
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
                        created_at_ms, raw, first_seen_at, last_seen_at, source, transfer_reason)
     VALUES ('gamma', '5', 'USDT', NULL, 'deposit', 10, 10, 0, timestamptz '2026-01-15 10:00:00.123+00',
             1768471200123, '["not", "an", "object"]', now(), now(), 'v2', NULL)`,
  );
  const march = (
    await q<{ bill_id: string }>(
      `SELECT bill_id FROM bills WHERE account_name = 'alpha' AND created_at >= '2026-03-10' ORDER BY created_at LIMIT 1`,
    )
  )[0]!.bill_id;
  await reviseBill(c, "alpha", march);
  for (const [account, month] of [
    ["alpha", 2],
    ["alpha", 3],
    ["alpha", 4],
    ["beta", 3],
  ] as const)
    sealed.set(`${account} ${month}`, await closeMonth(c, account, 2026, month));
  // A late bill in March, then March closed again (the first close superseded); one in April, not.
  await lateBill(c, "alpha", "2026-03-20 12:00:00+00", "900000000000000001");
  sealed.set("alpha 3", await closeMonth(c, "alpha", 2026, 3));
  await lateBill(c, "alpha", "2026-04-20 12:00:00+00", "900000000000000002");
}

async function lateBill(c: pg.Client, account: string, at: string, id: string): Promise<void> {
  await c.query(
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
                        created_at_ms, raw, source)
     SELECT $1, $3, 'USDT', 'cmt_btcusdt', 'position_funding', 0.25, 1, 0, t, (extract(epoch FROM t) * 1000)::bigint,
            jsonb_build_object('billId', $3::text, 'coin', 'USDT', 'amount', '0.25'), 'v2'
     FROM (SELECT $2::timestamptz AS t) x`,
    [account, at, id],
  );
}

beforeAll(async () => {
  db = await createTestDatabase("ls_upgrade");
  await migrateToOldSchema(db.url);
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await populate(client);
  before.bills = await q(ALL_BILLS);
  before.rollups = await q(ALL_ROLLUPS);
  before.revisions = await q(ALL_REVISIONS);
  for (const key of sealed.keys()) {
    const [account, month] = key.split(" ");
    before.digests.set(key, await digestNow(client, account!, 2026, Number(month)));
  }

  // The first migrate stops in its twelfth batch (the batch rolled back, as a kill would).
  let calls = 0;
  const stopAt = async (batch: CopiedBatch) => {
    if (++calls === 1) {
      run1.leases = await withClient(db.url, (c) =>
        c
          .query("SELECT account_name, holder FROM run_leases WHERE stream_group = 'bills' ORDER BY 1")
          .then((r) => r.rows),
      );
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      const taken = await takeLease(pool, "alpha", "bills", "worker", 30_000).finally(() => pool.end());
      run1.busy = "busy" in taken ? taken.busy : "taken";
    }
    if (calls === 12) throw new Error("stopped mid-copy (test)");
    run1.committed++;
    run1.bills += batch.bills;
  };
  const log = (line: string) => run1.log.push(line);
  run1.error = await migrateDeploy(db.url, { log, dataSteps: steps({ beforeCommit: stopAt }) }).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  run1.leases.push(...(await q("SELECT account_name, holder FROM run_leases WHERE holder IS NOT NULL")));

  const result = await migrateDeploy(db.url, {
    log: (line) => run2.log.push(line),
    dataSteps: steps({ beforeCommit: (b) => void (b.bills > 0 && run2.batches++) }),
  });
  run2.applied = result.applied;
}, 240_000);

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

describe("the bills upgrade, stopped mid-copy and resumed", () => {
  it("stopped the first migrate in its twelfth batch, with the copy half done and nothing swapped", async () => {
    expect(run1.error?.message).toContain("stopped mid-copy (test)");
    expect(run1.committed).toBeGreaterThanOrEqual(11);
    expect(run1.bills).toBeGreaterThan(0);
  });

  it("held the bills lease of every known account during the copy, and let go of them when it stopped", () => {
    const held = run1.leases.slice(0, 4);
    expect(held.map((r) => r.account_name)).toEqual(["alpha", "beta", QUIET, "gamma"]);
    for (const r of held) expect(r.holder).toMatch(/ migrate \(bills upgrade\)$/);
    expect(run1.busy).toMatch(/migrate \(bills upgrade\)$/);
    // None held once the first migrate failed (the rest of run1.leases: live holders after it).
    expect(run1.leases.slice(4)).toEqual([]);
  });

  it("resumed the copy where it stopped: the batches of both runs are those of one", async () => {
    const counts = await q<{ account_name: string; n: number }>(
      "SELECT account_name, count(*)::int AS n FROM bills_legacy GROUP BY 1",
    );
    const batches = counts.reduce((sum, c) => sum + Math.ceil(c.n / BATCH), 0);
    expect(run1.committed + run2.batches).toBe(batches);
    expect(run2.batches).toBeLessThan(batches);
    expect(run2.log.join("\n")).toContain(`resuming: ${run1.bills.toLocaleString("en-US")} of `);
    // The run that finished the copy applied the view's migration and every one after it.
    const after = readdirSync(join(import.meta.dirname, "../../../prisma/migrations"))
      .filter((name) => /^\d{14}_/.test(name) && name >= BILLS_VIEW_MIGRATION)
      .sort();
    expect(run2.applied).toEqual(after);
  });

  it("logged its progress: bills copied of all, accounts done, the rate, and each account done", () => {
    const log = run2.log.join("\n");
    expect(log).toMatch(
      /bills upgrade: [\d,]+\/[\d,]+ bills copied \(\d+\.\d%\), \d\/3 accounts done, [\d,]+ bills\/s, ETA/,
    );
    // Each account is done in one run or the other.
    const both = `${run1.log.join("\n")}\n${log}`;
    for (const a of ACCOUNTS) expect(both).toMatch(new RegExp(`account "${a.name}" copied \\([\\d,]+ bills\\)`));
    expect(log).toContain("every account's bills counted in bills and in bill_rows alike");
    expect(log).toContain(`data step of ${BILL_ROWS_MIGRATION}: copy the bills into bill_rows`);
  });

  it("gives back every bill through the view as it was: each column, raw, and the payload as raw's text", async () => {
    expect(await one("SELECT relkind::text FROM pg_class WHERE oid = 'bills'::regclass")).toBe("v");
    const after = await q(ALL_BILLS);
    expect(after.length).toBe(before.bills.length);
    expect(after).toEqual(before.bills);
    const payloads = await q(
      `SELECT count(*)::int AS n FROM bills v JOIN bills_legacy l USING (account_name, bill_id)
       WHERE v.payload = l.raw::text AND v.raw = l.raw`,
    );
    expect(payloads[0]!.n).toBe(before.bills.length);
    // What the fixture meant to have is there.
    const has = async (where: string) => Number(await one(`SELECT count(*) FROM bills WHERE ${where}`));
    expect(await has("symbol IS NULL")).toBeGreaterThan(100);
    expect(await has("transfer_reason IS NOT NULL")).toBeGreaterThan(100);
    expect(await has("raw ? 'tradeId'")).toBeGreaterThan(100);
    expect(await has("bill_id::numeric > 18446744073709551615")).toBeGreaterThan(10);
    expect(await has("last_seen_at <> first_seen_at")).toBeGreaterThan(100);
    expect(await has("source = 'v3'")).toBe(900);
    expect(await has("jsonb_typeof(raw) = 'array'")).toBe(1);
    expect(Number(await one("SELECT count(DISTINCT form_id) FROM bill_rows"))).toBeLessThan(20);
  });

  it("leaves every closed period's digest as it was, and says how many closes it checked", async () => {
    for (const [key, digest] of before.digests) {
      const [account, month] = key.split(" ");
      expect(await digestNow(client, account!, 2026, Number(month)), key).toBe(digest);
    }
    for (const key of ["alpha 2", "alpha 3", "beta 3"]) expect(before.digests.get(key), key).toBe(sealed.get(key));
    expect(before.digests.get("alpha 4")).not.toBe(sealed.get("alpha 4"));
    const log = run2.log.join("\n");
    expect(log).toContain("4 closed period(s) of 2 account(s) checked through the bills view: every digest as it was");
    expect(log).toContain('closed period 2026-04 of account "alpha" did not match its seal before the upgrade either');
    expect(await one("SELECT count(*)::int FROM bill_rows_upgrade WHERE closes_checked_at IS NULL")).toBe(0);
  });

  it("leaves daily_rollups and bill_revisions untouched", async () => {
    expect(await q(ALL_ROLLUPS)).toEqual(before.rollups);
    expect(await q(ALL_REVISIONS)).toEqual(before.revisions);
    expect(before.revisions.length).toBe(1);
  });

  it("released every lease, and a third migrate does nothing", async () => {
    expect(await q("SELECT account_name FROM run_leases WHERE holder IS NOT NULL")).toEqual([]);
    const log: string[] = [];
    expect((await migrateDeploy(db.url, { log: (l) => log.push(l), dataSteps: steps({}) })).applied).toEqual([]);
    expect(log.join("\n")).not.toContain("data step");
  });

  it("takes a bill written through the view after the upgrade, rollups included", async () => {
    const day = "2026-09-30";
    const rollup = () =>
      one(`SELECT coalesce(sum(bills), 0)::int FROM daily_rollups WHERE account_name = 'alpha' AND day = '${day}'`);
    const n = (await rollup()) as number;
    await q(
      `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee, created_at,
                          created_at_ms, raw, source)
       VALUES ('alpha', '999999999999999999999', 'USDT', 'cmt_btcusdt', 'position_funding', 1.50, 2, 0,
               timestamptz '${day} 08:00:00+00', ${Date.parse(`${day}T08:00:00Z`)},
               '{"billId": "999999999999999999999", "coin": "USDT", "amount": "1.50"}', 'v2')`,
    );
    const [row] = await q(
      "SELECT bill_id::text, amount::text, raw::text FROM bills WHERE account_name = 'alpha' AND bill_id = '999999999999999999999'",
    );
    expect(row).toEqual({
      bill_id: "999999999999999999999",
      amount: "1.50",
      raw: '{"coin": "USDT", "amount": "1.50", "billId": "999999999999999999999"}',
    });
    expect(await rollup()).toBe(n + 1);
  });

  it("storage drop-legacy: says what it would drop (exit 2), drops it with --confirm, then finds nothing", async () => {
    const env = { DATABASE_URL: db.url };
    const dry = await runCli(["storage", "drop-legacy"], env);
    expect(dry.code, dry.stderr).toBe(2);
    expect(dry.stdout).toContain(`bills_legacy: ${before.bills.length.toLocaleString("en-US")} bills, `);
    expect(dry.stderr).toContain("--confirm");
    expect(await one("SELECT to_regclass('bills_legacy')::text")).toBe("bills_legacy");
    const done = await runCli(["storage", "drop-legacy", "--confirm"], env);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain("dropped bills_legacy");
    expect(await one("SELECT to_regclass('bills_legacy')::text")).toBeNull();
    const again = await runCli(["storage", "drop-legacy", "--confirm"], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("nothing to drop");
  });
});
