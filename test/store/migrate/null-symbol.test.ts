// The null_symbol migration on real PostgreSQL, over books written before it: bills of no contract
// stored with symbol '' (as the v2 endpoint sent them), a revision, and a period closed then. After
// it, those symbols are NULL in bills, bill_revisions and daily_rollups, no revision was filed,
// nothing else of a bill moved (raw, times), the rollups still equal the bills, and the closed
// period still verifies with the digest it was sealed with.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkClosedPeriods } from "../../../src/periods/closed-period-check.ts";
import { LINE_SHA256, PERIOD_LINES, periodDigest } from "../../../src/periods/digest.ts";
import { startSandbox, type SandboxBill } from "../../../src/sandbox/index.ts";
import { migrateDeploy } from "../../../src/store/migrate/index.ts";
import { createDb, type Db } from "../../../src/store/prisma.ts";
import { storeBillsTheOldWay } from "../../support/bills-before-null-symbol.ts";
import { createTestDatabase, type TestDatabase } from "../../support/database.ts";
import { migrateBefore } from "../../support/migrate-before.ts";
import { expectRollupsMatchBills } from "../rollups/checks.ts";

const MIGRATION = "20261125200000_null_symbol";
const ACCOUNT = "before";
const JULY = { label: "2026-07", fromMs: Date.UTC(2026, 6, 1), toMs: Date.UTC(2026, 7, 1) };

// A close as `ledger-sync close` wrote it before the migration: the canonical line of that time
// (symbol as stored, '' for no contract), its digest, and each line's SHA-256.
const OLD_LINE = `b.bill_id || E'\\t' || b.created_at_ms || E'\\t' || to_json(b.coin) || E'\\t' || to_json(b.symbol)
  || E'\\t' || to_json(b.business_type) || E'\\t' || b.amount || E'\\t' || b.balance || E'\\t' || b.fill_fee
  || E'\\t' || coalesce(to_json(b.transfer_reason)::text, 'null')`;
const OLD_CLOSE = `
WITH lines AS (
  SELECT b.bill_id, b.created_at_ms, ${OLD_LINE} AS line FROM bills b
  WHERE b.account_name = $1 AND b.created_at_ms >= $2::bigint AND b.created_at_ms < $3::bigint
),
c AS (
  INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                             bill_count, digest, figures, closed_by)
  SELECT $1, $4, timestamptz 'epoch' + $2::bigint * interval '1 millisecond',
         timestamptz 'epoch' + $3::bigint * interval '1 millisecond', $2::bigint, $3::bigint, count(*)::int,
         encode(sha256(convert_to(coalesce(string_agg(line || E'\\n', '' ORDER BY created_at_ms, bill_id::numeric), ''),
           'UTF8')), 'hex'), '{}', 'auditor'
  FROM lines
  RETURNING id, digest
),
kept AS (INSERT INTO period_close_bills (close_id, bill_id, line_sha256)
         SELECT c.id, l.bill_id, sha256(convert_to(l.line, 'UTF8')) FROM c, lines l RETURNING 1)
SELECT (SELECT digest FROM c) AS digest, (SELECT count(*)::int FROM kept) AS bills`;

let database: TestDatabase;
let db: Db;
let truth: SandboxBill[];
let closeDigest: string;
let revised: SandboxBill;
type BillRow = { bill_id: string; symbol: string | null; raw: unknown; first_seen_at: Date; last_seen_at: Date };
let before: BillRow[];
const bills = () =>
  db.$queryRawUnsafe<BillRow[]>(
    "SELECT bill_id, symbol, raw, first_seen_at, last_seen_at FROM bills WHERE account_name = $1 ORDER BY bill_id",
    ACCOUNT,
  );
const count = async (sql: string) => (await db.$queryRawUnsafe<{ n: number }[]>(sql))[0]!.n;

beforeAll(async () => {
  database = await createTestDatabase();
  await migrateBefore(database.url, MIGRATION);
  db = createDb(database.url);
  const sandbox = await startSandbox({
    seed: 7,
    billCount: 900,
    startMs: Date.UTC(2026, 5, 20),
    endMs: Date.UTC(2026, 7, 10),
    limits: null,
    accountEvolution: "manual",
  });
  try {
    truth = sandbox.truth();
  } finally {
    await sandbox.close();
  }
  await storeBillsTheOldWay(db, ACCOUNT, truth, truth.at(-1)!.cTimeMs);
  // A transfer the exchange restated: its old version, symbol '', is filed in bill_revisions.
  revised = truth.find((b) => b.businessType === "transfer_in" && b.cTimeMs >= JULY.toMs)!;
  await storeBillsTheOldWay(db, ACCOUNT, [{ ...revised, amount: `${revised.amount}0` }], truth.at(-1)!.cTimeMs);
  const [closed] = await db.$queryRawUnsafe<{ digest: string; bills: number }[]>(
    OLD_CLOSE,
    ACCOUNT,
    String(JULY.fromMs),
    String(JULY.toMs),
    JULY.label,
  );
  closeDigest = closed!.digest;
  before = await bills();
  // Deploy as an upgrade does: this migration and any later one.
  await migrateDeploy(database.url, { log: () => undefined });
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe("the null_symbol migration", () => {
  it("stored the books the old way first: transfers with symbol '', in bills, revisions and rollups", () => {
    const none = truth.filter((b) => b.symbol === "");
    expect(none.length).toBeGreaterThan(10);
    expect(before.filter((b) => b.symbol === "").length).toBe(none.length);
    expect(before.filter((b) => b.symbol === null)).toEqual([]);
  });

  it("makes every '' NULL, in bills, bill_revisions and daily_rollups", async () => {
    const now = await bills();
    const none = new Set(truth.filter((b) => b.symbol === "").map((b) => b.billId));
    for (const row of now) expect(row.symbol === null, row.bill_id).toBe(none.has(row.bill_id));
    for (const table of ["bills", "bill_revisions", "daily_rollups"])
      expect(await count(`SELECT count(*)::int AS n FROM ${table} WHERE symbol = ''`), table).toBe(0);
    expect(await count("SELECT count(*)::int AS n FROM bill_revisions WHERE symbol IS NULL")).toBe(1);
    expect(await count("SELECT count(*)::int AS n FROM daily_rollups WHERE symbol IS NULL")).toBeGreaterThan(0);
  });

  it("files no revision and changes nothing else of a bill: raw, first and last seen", async () => {
    expect(await count("SELECT count(*)::int AS n FROM bill_revisions")).toBe(1);
    const now = await bills();
    expect(now.map(({ symbol: _s, ...rest }) => rest)).toEqual(before.map(({ symbol: _s, ...rest }) => rest));
    const raw = now.find((b) => b.bill_id === revised.billId)!.raw as Record<string, unknown>;
    expect(raw.symbol).toBe("");
  });

  it("leaves daily_rollups equal to the bills grouped", async () => {
    await expectRollupsMatchBills(db);
  });

  it("leaves the period closed before it verified, with the same digest and the same line of each bill", async () => {
    expect((await periodDigest(db, { account: ACCOUNT, ...JULY }, 1)).digest).toBe(closeDigest);
    const lines = await db.$queryRawUnsafe<{ n: number; same: number; transfers: number }[]>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE k.line_sha256 = ${LINE_SHA256})::int AS same,
              count(*) FILTER (WHERE l.line LIKE '%' || E'\\t""\\t' || '%')::int AS transfers
       FROM (${PERIOD_LINES}) l JOIN period_close_bills k USING (bill_id)`,
      ACCOUNT,
      String(JULY.fromMs),
      String(JULY.toMs),
    );
    expect(lines[0]!.n).toBeGreaterThan(100);
    expect(lines[0]!.same).toBe(lines[0]!.n);
    expect(lines[0]!.transfers).toBeGreaterThan(0);
    const checks = await checkClosedPeriods(db, { account: ACCOUNT });
    expect(checks).toEqual([expect.objectContaining({ subject: "2026-07", status: "pass" })]);
  });

  it("keeps the guards on: a bill's symbol still changes only through the revision path", async () => {
    const id = truth.find((b) => b.symbol === "")!.billId;
    await expect(
      db.$executeRawUnsafe("UPDATE bills SET symbol = 'cmt_x' WHERE account_name = $1 AND bill_id = $2", ACCOUNT, id),
    ).rejects.toThrow(/cannot be changed outside the revision path/);
    await expect(db.$executeRawUnsafe("UPDATE bill_revisions SET symbol = 'cmt_x'")).rejects.toThrow(/append-only/);
    const triggers = await db.$queryRawUnsafe<{ tgname: string; tgenabled: string }[]>(
      `SELECT tgname::text AS tgname, tgenabled::text AS tgenabled FROM pg_trigger
       WHERE tgrelid IN ('bill_rows'::regclass, 'bill_revisions'::regclass)
         AND tgname IN ('bill_rows_guard', 'bill_rows_rollups_update', 'bill_revisions_append_only') ORDER BY tgname`,
    );
    expect(triggers).toEqual([
      { tgname: "bill_revisions_append_only", tgenabled: "O" },
      { tgname: "bill_rows_guard", tgenabled: "O" },
      { tgname: "bill_rows_rollups_update", tgenabled: "A" },
    ]);
  });
});
