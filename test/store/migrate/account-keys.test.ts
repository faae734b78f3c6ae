// The account_keys migration on real PostgreSQL, over books written before it: two accounts whose
// rows interleave in every table it re-keys (runs, revisions, quarantine, snapshots, settings and
// histories), and closed periods, one of them closed twice (a chain). After it, every row is as it
// was, ids included, no table was rewritten, period_close_bills names its close's account, the keys
// lead with the account, and the close chain, its guards and the code that reads and writes the
// re-keyed tables work as before.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAccountResponse } from "../../../src/exchange/account-endpoint.ts";
import { parseLossless } from "../../../src/exchange/lossless-json.ts";
import { checkClosedPeriods } from "../../../src/periods/closed-period-check.ts";
import { currentCloses } from "../../../src/periods/close-store.ts";
import { DIGEST_OF_LINES, LINE_SHA256, PERIOD_LINES, periodDigest } from "../../../src/periods/digest.ts";
import { purgeAccountBooks } from "../../../src/store/accounts/purge.ts";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { createDb, type Db } from "../../../src/store/prisma.ts";
import { commitSnapshot } from "../../../src/store/snapshot-write.ts";
import { recordRun } from "../../../src/store/sync-runs.ts";
import { toSnapshotWrite } from "../../../src/streams/snapshots/mapping.ts";
import { accountResponse, position } from "../../support/account-fixture.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { committedMigrations, query, scratchMigrations } from "./helpers.ts";

const MIGRATION = "20261127100000_account_keys";
const ACCOUNTS = ["alpha", "beta"];
const JULY = { label: "2026-07", fromMs: Date.UTC(2026, 6, 1), toMs: Date.UTC(2026, 7, 1) };
/** The tables whose primary key was the bare id. */
const ID_TABLES = [
  "bill_revisions",
  "sync_runs",
  "period_closes",
  "quarantine",
  "account_snapshots",
  "fee_settings",
  "mode_settings",
  "leverage_settings",
  "collateral_history",
  "position_history",
];
const RUNS = 3000;

// A close as `ledger-sync close` writes it, $1 account, $2 from, $3 to, $4 label, $5 the close it
// supersedes (NULL: the first). Before the migration, period_close_bills had no account column.
const closeSql = (sealedAccount: boolean) => `
WITH lines AS (${PERIOD_LINES}),
c AS (
  INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                             bill_count, digest, figures, closed_by, supersedes)
  SELECT $1, $4, timestamptz 'epoch' + $2::bigint * interval '1 millisecond',
         timestamptz 'epoch' + $3::bigint * interval '1 millisecond', $2::bigint, $3::bigint, count(*)::int,
         ${DIGEST_OF_LINES}, '{}', 'auditor', $5::bigint
  FROM lines
  RETURNING id
),
kept AS (INSERT INTO period_close_bills (${sealedAccount ? "account_name, " : ""}close_id, bill_id, line_sha256)
         SELECT ${sealedAccount ? "$1, " : ""}c.id, l.bill_id, ${LINE_SHA256} FROM c, lines l RETURNING 1)
SELECT (SELECT id::text FROM c) AS id, (SELECT count(*)::int FROM kept) AS bills`;
const OLD_CLOSE = closeSql(false);

let database: TestDatabase;
let db: Db;
const closes: Record<string, string> = {};
/** Every row of each table before the migration, as jsonb, in key order. */
let before: Record<string, unknown[]>;
let filenodes: Record<string, string>;

const count = async (sql: string, values: unknown[] = []): Promise<number> =>
  (await query<{ n: number }>(database.url, sql, values))[0]!.n;
const rowsOf = async (table: string): Promise<unknown[]> =>
  (
    await query<{ row: unknown }>(
      database.url,
      `SELECT to_jsonb(t) AS row FROM "${table}" t ORDER BY ${table === "period_close_bills" ? "close_id, bill_id" : "id"}`,
    )
  ).map((r) => r.row);
const filenodesOf = async () =>
  Object.fromEntries(
    (
      await query<{ t: string; n: string }>(
        database.url,
        "SELECT relname::text AS t, relfilenode::text AS n FROM pg_class WHERE relname = ANY($1::text[])",
        [[...ID_TABLES, "period_close_bills"]],
      )
    ).map((r) => [r.t, r.n]),
  );

/** Runs statements in one transaction on a connection of its own. */
async function inTransaction(statements: [string, unknown[]?][]): Promise<void> {
  const c = new pg.Client({ connectionString: database.url });
  await c.connect();
  try {
    await c.query("BEGIN");
    for (const [sql, values] of statements) await c.query(sql, values ?? []);
    await c.query("COMMIT");
  } finally {
    await c.end();
  }
}

/** A bill restated through the revision path: bills_guard files its old version in bill_revisions. */
const revise = (account: string, billId: string) =>
  inTransaction([
    ["SELECT set_config('ledger_sync.revision', 'on', true)"],
    [
      `UPDATE bills SET amount = amount + 1, balance = balance + 1, last_seen_at = now()
       WHERE account_name = $1 AND bill_id = $2`,
      [account, billId],
    ],
  ]);

/** One snapshot of `account`, its content varied by `n`: every snapshot table gets a version. */
async function snapshot(account: string, n: number, takenAt = new Date(Date.UTC(2026, 7, 1 + n, 0, 0, 0, 123))) {
  const r = accountResponse();
  r.account.status = n % 2 === 0 ? "NORMAL" : "FROZEN";
  r.account.contract_id_to_fee_setting["10000001"]!.taker_fee_rate = `0.000${6 + n}`;
  r.account.contract_id_to_mode_setting["10000001"]!.position_mode = n % 2 === 0 ? "HEDGE" : "ONE_WAY";
  r.account.contract_id_to_leverage_setting["10000001"]!.cross_leverage = String(20 + n);
  r.collateral[0]!.amount = `12345.${n}`;
  (r as { position?: unknown[] }).position = [position({ id: `9${n}`, size: `0.${n + 1}` })];
  const text = JSON.stringify(r);
  const parsed = parseAccountResponse(parseLossless(text), text);
  if (!parsed.ok) throw new Error(parsed.reason);
  await commitSnapshot(db, toSnapshotWrite(account, "2", takenAt, parsed.response, parsed.raw));
}

beforeAll(async () => {
  database = await createTestDatabase();
  const names = await committedMigrations();
  const at = names.indexOf(MIGRATION);
  expect(at).toBeGreaterThan(0);
  // The books as the previous migration left the schema.
  const previous = await scratchMigrations(at);
  try {
    await migrateDeploy(database.url, { migrationsDir: previous.dir, log: () => undefined });
  } finally {
    await previous.remove();
  }
  db = createDb(database.url);

  // 120 bills of July per account, the two accounts' ids alternating.
  await query(
    database.url,
    `INSERT INTO bills (account_name, bill_id, coin, symbol, business_type, amount, balance, fill_fee,
                        created_at, created_at_ms, raw)
     SELECT a.name, (700000000000000000 + g * 2 + a.n)::text, 'USDT', CASE WHEN g % 5 = 0 THEN NULL ELSE 'cmt_btcusdt' END,
            CASE WHEN g % 5 = 0 THEN 'deposit' ELSE 'position_funding' END, (g || '.5')::numeric,
            (g * g || '.50')::numeric, 0.00,
            timestamptz 'epoch' + ms * interval '1 millisecond', ms, jsonb_build_object('g', g)
     FROM generate_series(1, 120) g, unnest($1::text[]) WITH ORDINALITY AS a(name, n),
          LATERAL (SELECT $2::bigint + g::bigint * 6 * 3600 * 1000 + a.n AS ms) t`,
    [ACCOUNTS, String(JULY.fromMs)],
  );
  // Runs: a populated table whose ids interleave the accounts.
  await query(
    database.url,
    `INSERT INTO sync_runs (account_name, stream, window_from_ms, window_to_ms, pages, records_fetched,
                            started_at, finished_at, outcome, detail)
     SELECT CASE WHEN g % 3 = 0 THEN 'beta' ELSE 'alpha' END, CASE WHEN g % 7 = 0 THEN 'snapshots' ELSE 'bills' END,
            g * 1000, g * 1000 + 999, g % 4, g % 11, timestamptz '2026-07-01' + g * interval '1 minute',
            timestamptz '2026-07-01' + g * interval '1 minute' + interval '2 seconds',
            CASE WHEN g % 13 = 0 THEN 'failed' ELSE 'ok' END, jsonb_build_object('g', g)
     FROM generate_series(1, $1::int) g`,
    [RUNS],
  );
  for (const [i, account] of [...ACCOUNTS, ...ACCOUNTS].entries())
    await query(
      database.url,
      `INSERT INTO quarantine (account_name, stream, reason, raw_text, raw_hash, context)
       VALUES ($1, 'bills', 'amount is not a number', $2, encode(sha256(convert_to($2, 'UTF8')), 'hex'), '{}')`,
      [account, `{"billId":"${i}","amount":"x"}`],
    );
  for (const n of [0, 1, 2]) for (const account of ACCOUNTS) await snapshot(account, n);

  // July closed for both; then a bill of each account's July restated, and alpha's July closed again.
  for (const account of ACCOUNTS) {
    const [c] = await query<{ id: string; bills: number }>(database.url, OLD_CLOSE, [
      account,
      String(JULY.fromMs),
      String(JULY.toMs),
      JULY.label,
      null,
    ]);
    expect(c!.bills).toBeGreaterThan(100);
    closes[account] = c!.id;
  }
  await revise("alpha", "700000000000000013");
  await revise("beta", "700000000000000104");
  const [again] = await query<{ id: string }>(database.url, OLD_CLOSE, [
    "alpha",
    String(JULY.fromMs),
    String(JULY.toMs),
    JULY.label,
    closes.alpha,
  ]);
  closes.alpha2 = again!.id;

  before = {};
  for (const table of [...ID_TABLES, "period_close_bills"]) before[table] = await rowsOf(table);
  filenodes = await filenodesOf();
  // This migration alone (the first tests look at what it did); later ones come before today's code runs.
  const upTo = await scratchMigrations(at + 1);
  try {
    await migrateDeploy(database.url, { migrationsDir: upTo.dir, log: () => undefined });
  } finally {
    await upTo.remove();
  }
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("the account_keys migration", () => {
  it("was given books in every table it re-keys, both accounts interleaved", () => {
    for (const table of ID_TABLES) {
      const accounts = new Set((before[table] as { account_name: string }[]).map((r) => r.account_name));
      expect([...accounts].sort(), table).toEqual(ACCOUNTS);
    }
    expect(before.period_close_bills!.length).toBe(3 * 120);
    expect(before.sync_runs).toHaveLength(RUNS);
    expect(before.bill_revisions).toHaveLength(2);
    expect(before.period_closes).toHaveLength(3);
  });

  it("keeps every row as it was, ids included, and rewrites no table", async () => {
    for (const table of ID_TABLES) expect(await rowsOf(table), table).toEqual(before[table]);
    expect(await filenodesOf()).toEqual(filenodes);
  });

  it("gives each period_close_bills row its close's account, and changes nothing else of it", async () => {
    const now = (await rowsOf("period_close_bills")) as Record<string, unknown>[];
    expect(now.map(({ account_name: _a, ...rest }) => rest)).toEqual(before.period_close_bills);
    expect(
      await count(
        `SELECT count(*)::int AS n FROM period_close_bills b JOIN period_closes c ON c.id = b.close_id
         WHERE b.account_name = c.account_name`,
      ),
    ).toBe(before.period_close_bills!.length);
  });

  it("leads every key it touched with the account", async () => {
    const keys = await query<{ name: string; def: string }>(
      database.url,
      `SELECT conname::text AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE connamespace = current_schema()::regnamespace AND contype IN ('p', 'u', 'f')
         AND conrelid::regclass::text = ANY($1::text[]) ORDER BY conname`,
      [[...ID_TABLES, "period_close_bills"]],
    );
    const def = Object.fromEntries(keys.map((k) => [k.name, k.def]));
    for (const table of ID_TABLES) expect(def[`${table}_pkey`], table).toBe("PRIMARY KEY (account_name, id)");
    expect(def.period_close_bills_pkey).toBe("PRIMARY KEY (account_name, close_id, bill_id)");
    expect(def.period_close_bills_close_id_fkey).toBe(
      "FOREIGN KEY (account_name, close_id) REFERENCES period_closes(account_name, id) ON UPDATE RESTRICT ON DELETE RESTRICT",
    );
    expect(def.period_closes_supersedes_fkey).toBe(
      "FOREIGN KEY (account_name, supersedes) REFERENCES period_closes(account_name, id) ON UPDATE RESTRICT ON DELETE RESTRICT",
    );
    const [supersedes] = await query<{ def: string }>(
      database.url,
      "SELECT pg_get_indexdef('period_closes_supersedes_key'::regclass) AS def",
    );
    expect(supersedes!.def).toContain("(account_name, supersedes)");
  });

  it("keeps the close chain: the current seals, and both periods still verify", async () => {
    // Later migrations too, as an upgrade applies them, before the code of today reads the books.
    await migrateDeploy(database.url, { log: () => undefined });
    const current = await currentCloses(db, {});
    expect(current.map((c) => [c.account, c.id, c.supersedes, c.closes])).toEqual([
      ["alpha", closes.alpha2, closes.alpha, 2],
      ["beta", closes.beta, null, 1],
    ]);
    expect((await periodDigest(db, { account: "alpha", ...JULY }, 1)).digest).toBe(current[0]!.digest);
    expect(await checkClosedPeriods(db, { account: "alpha" })).toEqual([
      expect.objectContaining({ subject: "2026-07", status: "pass" }),
    ]);
    // beta's bill was restated after its close: verify names it, from the bills that close sealed.
    const [beta] = await checkClosedPeriods(db, { account: "beta" });
    expect(beta).toMatchObject({ status: "fail", details: { changes: { changed: 1, added: 0, missing: 0 } } });
    expect((beta!.details as { bills: { billId: string }[] }).bills.map((b) => b.billId)).toEqual([
      "700000000000000104",
    ]);
  });

  it("keeps the chain's guards: no close of another account, no second successor, no foreign sealed bill", async () => {
    const close = (account: string, supersedes: string | null) =>
      query(database.url, closeSql(true), [account, String(JULY.fromMs), String(JULY.toMs), JULY.label, supersedes]);
    await expect(close("beta", closes.alpha2!)).rejects.toThrow(/not a close of the same account and period/);
    await expect(close("alpha", closes.alpha!)).rejects.toThrow(/period_closes_supersedes_key/);
    await expect(close("alpha", null)).rejects.toThrow(/period_closes_first_close_key/);
    await expect(
      query(
        database.url,
        "INSERT INTO period_close_bills (account_name, close_id, bill_id, line_sha256) VALUES ('beta', $1, '1', sha256(''))",
        [closes.alpha2],
      ),
    ).rejects.toThrow(/period_close_bills_close_id_fkey/);
    for (const sql of [
      "UPDATE period_close_bills SET bill_id = '1'",
      "DELETE FROM period_close_bills",
      "DELETE FROM period_closes",
    ])
      await expect(query(database.url, sql), sql).rejects.toThrow(/append-only/);
    const [trigger] = await query<{ e: string }>(
      database.url,
      "SELECT tgenabled::text AS e FROM pg_trigger WHERE tgname = 'period_close_bills_append_only'",
    );
    expect(trigger!.e).toBe("O");
  });

  it("goes on numbering from the same sequences, and the run's end finds its row", async () => {
    const maxRun = Math.max(...(before.sync_runs as { id: number }[]).map((r) => Number(r.id)));
    await recordRun(
      db,
      { accountName: "beta", stream: "bills" },
      async () => 1,
      () => ({ pages: 7, recordsFetched: 1, recordsNew: 1, recordsChanged: 0, quarantined: 0 }),
      () => false,
    );
    const [run] = await query<{ id: string; pages: number; outcome: string }>(
      database.url,
      "SELECT id::text, pages, outcome FROM sync_runs r WHERE account_name = 'beta' ORDER BY r.id DESC LIMIT 1",
    );
    expect(run).toEqual({ id: String(maxRun + 1), pages: 7, outcome: "ok" });
    // The same content again: the latest account_snapshots row is touched, found by its key.
    const later = new Date(Date.UTC(2026, 8, 1));
    await snapshot("alpha", 2, later);
    const [latest] = await query<{ id: string; last_seen_at: Date }>(
      database.url,
      "SELECT id::text, last_seen_at FROM account_snapshots s WHERE account_name = 'alpha' ORDER BY s.id DESC LIMIT 1",
    );
    expect(latest!.last_seen_at).toEqual(later);
    await snapshot("alpha", 3, later);
    expect(await count("SELECT count(*)::int AS n FROM account_snapshots WHERE account_name = 'alpha'")).toBe(4);
    expect(await count("SELECT max(id)::int AS n FROM account_snapshots")).toBeGreaterThan(Number(latest!.id));
  });

  it("purges one account's books, sealed bills included, and leaves the other's", async () => {
    const alphaSealed = "SELECT count(*)::int AS n FROM period_close_bills WHERE account_name = 'alpha'";
    const alphaBefore = await count(alphaSealed);
    const { deleted } = await purgeAccountBooks(db, "beta");
    expect(deleted.period_close_bills).toBe(
      (before.period_close_bills as { close_id: number }[]).filter((r) => String(r.close_id) === closes.beta).length,
    );
    expect(deleted.period_closes).toBe(1);
    for (const table of [...ID_TABLES, "period_close_bills"])
      expect(await count(`SELECT count(*)::int AS n FROM "${table}" WHERE account_name = 'beta'`), table).toBe(0);
    expect(await count(alphaSealed)).toBe(alphaBefore);
    expect(await checkClosedPeriods(db, { account: "alpha" })).toEqual([
      expect.objectContaining({ subject: "2026-07", status: "pass" }),
    ]);
  });
});
