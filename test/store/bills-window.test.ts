import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bill } from "../../src/exchange/bill-item.ts";
import { billsWindowStatement, commitBillsWindow } from "../../src/store/bills-window.ts";
import { directPool } from "../../src/store/prisma.ts";
import { readCursor } from "../../src/store/cursors.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

const bill = (id: string, over: Partial<Bill> = {}): Bill => ({
  billId: id,
  coin: "USDT",
  symbol: "cmt_btcusdt",
  businessType: "position_close_long",
  amount: "-12.34500000",
  balance: "123456789012345678901234567890.123456789012345678901234567890",
  fillFee: "0.00000001",
  cTimeMs: 1700000000123,
  raw: { billId: id, extra: { nested: [1, "x"] } },
  ...over,
});

const write = (bills: Bill[], cursorMs: number, rejected: { rawText: string; reason: string }[] = []) =>
  commitBillsWindow(t.db, {
    accountName: "acct",
    stream: "bills",
    cursorMs,
    bills,
    rejected,
    context: { fromMs: 0, toMs: cursorMs },
  });

describe("committing a bills window", () => {
  it("stores every decimal digit for digit, ids above 2^64, times exact, raw as jsonb", async () => {
    const id = "98765432109876543210987654321";
    const before = Date.now();
    const r = await write([bill(id)], 1700000000200);
    expect(r).toEqual({
      inserted: 1,
      revised: 0,
      upserted: 1,
      quarantined: 0,
      insertedLatenessMs: [expect.any(Number)],
    });
    // first_seen_at − created_at: stored now, created at 1700000000123.
    expect(Math.abs(r.insertedLatenessMs[0]! - (before - 1700000000123))).toBeLessThan(5_000);
    const rows = await t.db.$queryRawUnsafe<Record<string, string>[]>(
      "SELECT bill_id, amount::text, balance::text, fill_fee::text, created_at_ms::text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') AS created_at, raw::text FROM bills WHERE bill_id = $1",
      id,
    );
    expect(rows[0]).toEqual({
      bill_id: id,
      amount: "-12.34500000",
      balance: "123456789012345678901234567890.123456789012345678901234567890",
      fill_fee: "0.00000001",
      created_at_ms: "1700000000123",
      created_at: "2023-11-14 22:13:20.123",
      raw: `{"extra": {"nested": [1, "x"]}, "billId": "${id}"}`,
    });
    expect(await readCursor(t.db, "acct", "bills")).toBe(1700000000200);
  });

  it("writes nothing new when the same window is written again, and never moves the cursor back", async () => {
    const r = await write([bill("5001"), bill("5002")], 1700000000300);
    expect(r.inserted).toBe(2);
    const again = await write([bill("5001"), bill("5002")], 1700000000250);
    expect(again).toEqual({ inserted: 0, revised: 0, upserted: 2, quarantined: 0, insertedLatenessMs: [] });
    expect(await readCursor(t.db, "acct", "bills")).toBe(1700000000300);
    expect(await t.db.billRevision.count()).toBe(0);
  });

  it("a bill read again unchanged makes no row version; a changed one makes exactly one", async () => {
    const ids = ["5101", "5102", "5103"];
    await write(
      ids.map((id) => bill(id)),
      1700000000300,
    );
    const versions = async () =>
      (
        await t.db.$queryRawUnsafe<{ bill_id: string; v: string }[]>(
          "SELECT bill_id::text, xmin::text || '@' || ctid::text AS v FROM bill_rows WHERE bill_id = ANY($1::numeric[]) ORDER BY bill_id",
          ids,
        )
      ).map((r) => `${r.bill_id}:${r.v}`);
    const before = await versions();
    for (let k = 0; k < 3; k++) {
      const again = await write(
        ids.map((id) => bill(id, { raw: { billId: id, reread: k } })),
        1700000000300,
      );
      expect(again).toMatchObject({ inserted: 0, revised: 0, upserted: 3 });
    }
    expect(await versions()).toEqual(before);
    const changed = await write([bill("5101"), bill("5102", { amount: "9.25" }), bill("5103")], 1700000000300);
    expect(changed).toMatchObject({ inserted: 0, revised: 1, upserted: 3 });
    const after = await versions();
    expect(after.filter((v, i) => v !== before[i]).map((v) => v.split(":")[0])).toEqual(["5102"]);
    expect(await t.db.billRevision.count({ where: { billId: "5102" } })).toBe(1);
  });

  it("keeps the old version in bill_revisions when the exchange changes a known bill", async () => {
    await write([bill("6001", { amount: "1.5" })], 1700000000400);
    const r = await write([bill("6001", { amount: "1.50", raw: { changed: true } })], 1700000000400);
    expect(r).toMatchObject({ inserted: 0, revised: 1 });
    const current = await t.db.$queryRawUnsafe<{ amount: string; raw: unknown }[]>(
      "SELECT amount::text, raw FROM bills WHERE bill_id = '6001'",
    );
    expect(current[0]).toEqual({ amount: "1.50", raw: { changed: true } });
    const old = await t.db.$queryRawUnsafe<{ amount: string }[]>(
      "SELECT amount::text FROM bill_revisions WHERE bill_id = '6001'",
    );
    expect(old).toEqual([{ amount: "1.5" }]);
  });

  it("a re-encoded but identical bill is not a revision and keeps its first raw", async () => {
    await write([bill("7001", { raw: { billId: 7001 } })], 1700000000500);
    const r = await write([bill("7001", { raw: { billId: "7001" } })], 1700000000500);
    expect(r.revised).toBe(0);
    const rows = await t.db.$queryRawUnsafe<{ raw: unknown }[]>("SELECT raw FROM bills WHERE bill_id = '7001'");
    expect(rows[0]?.raw).toEqual({ billId: 7001 });
  });

  it("quarantines rejected items once, counting repeats, with their context", async () => {
    const bad = { rawText: '{"billId":"x"}', reason: 'billId "x" is not a non-negative integer' };
    expect((await write([], 1700000000600, [bad])).quarantined).toBe(1);
    expect((await write([], 1700000000600, [bad])).quarantined).toBe(0);
    const rows = await t.db.quarantine.findMany();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      rawText: bad.rawText,
      reason: bad.reason,
      seenCount: 2,
      stream: "bills",
      context: { fromMs: 0, toMs: 1700000000600 },
    });
  });

  it("refuses a bill id that is not digits, or has a leading zero, at the database too", async () => {
    await expect(write([bill("12a")], 1)).rejects.toThrow(/bill id "12a" is not decimal digits/);
    await expect(write([bill("0123")], 1)).rejects.toThrow(/bill id "0123" is not decimal digits/);
  });

  it("looks up stored bills by their time and id and updates them by row id, even for an account the statistics do not know; new bills (ids above every stored range) are not looked up", async () => {
    // Statistics gathered while the account had no bills say "1 row" for it; a plain join then
    // scanned all its stored bills once per incoming bill (6 s per 1,000-bill batch at 18,000).
    const many = (prefix: string, n: number, t0: number) =>
      Array.from({ length: n }, (_, i) => bill(`${prefix}${String(i).padStart(6, "0")}`, { cTimeMs: t0 + i }));
    await commitBillsWindow(t.db, {
      accountName: "known",
      stream: "bills",
      cursorMs: 1,
      bills: many("81", 2000, 1_600_000_000_000),
      rejected: [],
      context: {},
    });
    await t.db.$executeRawUnsafe("ANALYZE bill_rows");
    for (let k = 0; k < 3; k++)
      await commitBillsWindow(t.db, {
        accountName: "newcomer",
        stream: "bills",
        cursorMs: 1,
        bills: many(`8${2 + k}`, 1000, 1_650_000_000_000 + k * 1000),
        rejected: [],
        context: {},
      });
    // Half of the batch is stored already (a re-read): those take the lookup and update path.
    await commitBillsWindow(t.db, {
      accountName: "newcomer",
      stream: "bills",
      cursorMs: 1,
      bills: many("85", 250, 1_660_000_000_000),
      rejected: [],
      context: {},
    });
    const batch = many("85", 500, 1_660_000_000_000).map((b, i) => (i % 5 === 0 ? { ...b, amount: "7.5" } : b));
    const { text, values } = billsWindowStatement({
      accountName: "newcomer",
      stream: "bills",
      cursorMs: 1,
      bills: batch,
      rejected: [],
      context: {},
    });
    const pool = directPool(t.db)!;
    await pool.query("SELECT ledger_sync_bill_months('2022-01-01', '2023-01-01')");
    const client = await pool.connect();
    try {
      await client.query("BEGIN"); // EXPLAIN ANALYZE runs the statement: roll it back
      const plan = (await client.query<{ "QUERY PLAN": unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values))
        .rows[0]!["QUERY PLAN"];
      await client.query("ROLLBACK");
      const nodes: Array<Record<string, unknown>> = [];
      const walk = (n: Record<string, unknown>) => {
        nodes.push(n);
        for (const c of (n.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(c);
      };
      walk((plan as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
      const onBills = (n: Record<string, unknown>) =>
        String(n["Relation Name"] ?? "").startsWith("bill_rows") && String(n["Node Type"]).includes("Scan");
      const billScans = nodes.filter(onBills);
      // The stored half: one primary-key probe each in the bill's month, planned in the batch's
      // months only (not in each of the 13 the account's table has), then one call that updates the
      // changed ones (one in five) by row id; none for the unchanged. Found by time and id, no bill
      // needs the second probe (by id range), which never runs. No scan reads a month whole.
      const months = new Set(
        batch.map((b) => `bill_rows_${new Date(b.cTimeMs).toISOString().slice(0, 7).replace("-", "_")}`),
      );
      expect(new Set(billScans.map((n) => n["Relation Name"]))).toEqual(months);
      const ran = billScans.filter((n) => Number(n["Actual Loops"]) > 0);
      const probes = ran.filter((n) => String(n["Node Type"]).startsWith("Index"));
      expect(probes.length, JSON.stringify(ran)).toBe(ran.length);
      expect(probes.map((n) => Number(n["Actual Loops"]))).toEqual([250]);
      expect(String(probes[0]!["Index Cond"])).toContain("(created_at = ");
      expect(probes[0]!["Rows Removed by Filter"] ?? 0).toBe(0);
      const calls = (name: string) =>
        nodes.filter((n) => n["Function Name"] === name).map((n) => [n["Actual Loops"], n["Actual Rows"]]);
      expect(calls("ledger_sync_bill_by_id")).toEqual([[0, 0]]);
      expect(calls("ledger_sync_revise_bills")).toEqual([[1, 50]]);
      // The stored bills are read once, whoever reads them: the insert leaves them out through a
      // hash, not by scanning them again for each bill of the batch (quadratic: a 1,000-bill re-read
      // took 65 ms of 79 in that scan).
      const knownScans = nodes.filter((n) => n["Node Type"] === "CTE Scan" && n["CTE Name"] === "known");
      expect(knownScans.length).toBeGreaterThan(1);
      for (const n of knownScans) expect(Number(n["Actual Loops"]), JSON.stringify(n)).toBeLessThanOrEqual(1);

      // A batch of new bills only (a backfill): no lookup runs at all.
      const fresh = billsWindowStatement({
        accountName: "newcomer",
        stream: "bills",
        cursorMs: 1,
        bills: many("86", 500, 1_670_000_000_000),
        rejected: [],
        context: {},
      });
      await client.query("BEGIN");
      const freshPlan = (
        await client.query<{ "QUERY PLAN": unknown }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${fresh.text}`, fresh.values)
      ).rows[0]!["QUERY PLAN"];
      await client.query("ROLLBACK");
      nodes.length = 0;
      walk((freshPlan as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
      const freshScans = nodes.filter(onBills);
      expect(freshScans.length).toBeGreaterThan(0);
      for (const n of freshScans) expect(n["Actual Loops"], JSON.stringify(n)).toBe(0);
      expect(calls("ledger_sync_bill_by_id")).toEqual([[0, 0]]);
      expect(calls("ledger_sync_revise_bills")).toEqual([[0, 0]]);
    } finally {
      client.release();
    }
  });
});

describe("source, transfer reason and resume point", () => {
  const read = (id: string) =>
    t.db.$queryRawUnsafe<{ source: string; transfer_reason: string | null }[]>(
      "SELECT source, transfer_reason FROM bills WHERE account_name = 'src' AND bill_id = $1",
      id,
    );
  const revisions = (id: string) =>
    t.db.$queryRawUnsafe<{ transfer_reason: string | null }[]>(
      "SELECT transfer_reason FROM bill_revisions WHERE account_name = 'src' AND bill_id = $1 ORDER BY id",
      id,
    );
  const put = (bills: Bill[], source: "v2" | "v3", resume?: unknown) =>
    commitBillsWindow(t.db, {
      accountName: "src",
      stream: "bills",
      cursorMs: 1700000000200,
      bills,
      rejected: [],
      context: {},
      source,
      resume,
    });

  it("renders raw and payload inside the query: no function call per bill (the payload functions inline)", async () => {
    // Were a payload function declared more strictly than its body (IMMUTABLE over format()), the
    // planner would call it once per bill through the SQL-function executor: ~15x slower reads.
    const rows = await t.db.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(
      "EXPLAIN (VERBOSE, COSTS OFF) SELECT payload, raw FROM bills",
    );
    const plan = rows.map((r) => r["QUERY PLAN"]).join("\n");
    expect(plan).toContain("format(");
    expect(plan).not.toMatch(/ledger_sync_(payload|json_inner)\(/);
  });

  it("stores the endpoint that first stored a bill, and never changes it", async () => {
    await put([bill("501")], "v3");
    await put([bill("502")], "v2");
    expect((await put([bill("501")], "v2")).revised).toBe(0);
    expect(await read("501")).toEqual([{ source: "v3", transfer_reason: null }]);
    expect(await read("502")).toEqual([{ source: "v2", transfer_reason: null }]);
    // Not even by hand: the audit trail's guard refuses it.
    await expect(
      t.db.$executeRawUnsafe("UPDATE bills SET source = 'v2' WHERE account_name = 'src' AND bill_id = '501'"),
    ).rejects.toThrow(/source never change/);
  });

  it("keeps a transfer reason an endpoint leaves out, and files a changed one as a revision", async () => {
    await put([bill("511", { transferReason: "USER_TRANSFER" })], "v3");
    // v2 leaves it out: nothing changes, nothing is revised.
    expect((await put([bill("511")], "v2")).revised).toBe(0);
    expect(await read("511")).toEqual([{ source: "v3", transfer_reason: "USER_TRANSFER" }]);
    expect(await revisions("511")).toEqual([]);
    // A different reason is a new version: the old one goes to bill_revisions with its reason.
    expect((await put([bill("511", { transferReason: "SYSTEM_TRANSFER" })], "v3")).revised).toBe(1);
    expect(await read("511")).toEqual([{ source: "v3", transfer_reason: "SYSTEM_TRANSFER" }]);
    expect(await revisions("511")).toEqual([{ transfer_reason: "USER_TRANSFER" }]);
  });

  it("writes the resume point with the rows, and clears it when none is given", async () => {
    const resume = { fromMs: 1, toMs: 2, nextKey: { nextKeyId: "98765432109876543210", nextKeyTime: "1700000000100" } };
    await put([bill("521")], "v3", resume);
    const state = () =>
      t.db.$queryRawUnsafe<{ resume: unknown }[]>(
        "SELECT resume FROM sync_state WHERE account_name = 'src' AND stream = 'bills'",
      );
    expect(await state()).toEqual([{ resume }]);
    await put([], "v3");
    expect(await state()).toEqual([{ resume: null }]);
  });
});

describe("a month whose partition went away while this process knew it", () => {
  const MARCH_2024 = Date.UTC(2024, 2, 10);
  const gone = async () => {
    await t.db.$executeRawUnsafe("ALTER TABLE bill_rows DETACH PARTITION bill_rows_2024_03");
    await t.db.$executeRawUnsafe("DROP TABLE bill_rows_2024_03");
  };

  it("is refused by name when it was archived, and made again when it was dropped by hand", async () => {
    await write([bill("6001", { cTimeMs: MARCH_2024 })], MARCH_2024 + 10);
    await gone();
    await t.db.$executeRawUnsafe(
      `INSERT INTO archived_months (month, partition_name, rows, manifest_sha256, accounts)
       VALUES ('2024-03-01', 'bill_rows_2024_03', 1, $1, '[]')`,
      "a".repeat(64),
    );
    // The process made March before: the write finds no partition, asks again, and is refused by name.
    await expect(write([bill("6002", { cTimeMs: MARCH_2024 + 1 })], MARCH_2024 + 20)).rejects.toThrow(
      /bills of 2024-03 are archived/,
    );
    await t.db.$executeRawUnsafe("DELETE FROM archived_months WHERE month = '2024-03-01'");
    // Not archived: the month is made again and the window written.
    expect((await write([bill("6002", { cTimeMs: MARCH_2024 + 1 })], MARCH_2024 + 20)).inserted).toBe(1);
    expect(
      await t.db.$queryRawUnsafe(
        "SELECT bill_id FROM bills WHERE account_name = 'acct' AND created_at_ms >= $1::bigint AND created_at_ms < $2::bigint",
        String(Date.UTC(2024, 2, 1)),
        String(Date.UTC(2024, 3, 1)),
      ),
    ).toEqual([{ bill_id: "6002" }]);
  });
});
