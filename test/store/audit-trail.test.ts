// The audit trail on real PostgreSQL: bills cannot be deleted or changed outside the revision path,
// the revision path always files the old version, the trail's tables are append-only, every run is
// recorded in sync_runs, and writes behind the incremental verify's start send it back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bill } from "../../src/exchange/bill-item.ts";
import { startSandbox } from "../../src/sandbox/index.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { syncFromSandbox } from "../support/sandbox-sync.ts";

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
  amount: "-12.345",
  balance: "1000.5",
  fillFee: "-0.01",
  cTimeMs: 1700000000123,
  raw: { billId: id },
  ...over,
});
const write = (account: string, bills: Bill[], cursorMs = 1700000001000) =>
  commitBillsWindow(t.db, { accountName: account, stream: "bills", cursorMs, bills, rejected: [], context: {} });

/** Runs one statement on its own connection state and returns the PostgreSQL error it raised. */
async function refused(sql: string, ...params: unknown[]): Promise<{ code: string; message: string }> {
  try {
    await t.db.$executeRawUnsafe(sql, ...params);
  } catch (err) {
    const e = err as {
      meta?: {
        code?: string;
        message?: string;
        driverAdapterError?: { cause?: { originalCode?: string; originalMessage?: string } };
      };
      message: string;
    };
    const cause = e.meta?.driverAdapterError?.cause;
    return { code: cause?.originalCode ?? e.meta?.code ?? "", message: cause?.originalMessage ?? e.message };
  }
  throw new Error(`statement was not refused: ${sql}`);
}

const revisions = (account: string) =>
  t.db.$queryRawUnsafe<{ bill_id: string; amount: string; balance: string; replaced_at: Date }[]>(
    "SELECT bill_id, amount::text, balance::text, replaced_at FROM bill_revisions WHERE account_name = $1 ORDER BY id",
    account,
  );

describe("bills refuse silent changes", () => {
  beforeAll(async () => {
    await write("a", [bill("1"), bill("2", { cTimeMs: 1700000000200 })]);
  });

  it("refuses a direct UPDATE of an amount, balance, fee or time, and changes nothing", async () => {
    for (const set of [
      "amount = amount + 1",
      "balance = 0",
      "fill_fee = 0",
      "created_at_ms = 1",
      "coin = 'USDC'",
      "raw = '{}'",
      "first_seen_at = now() - interval '1 day'",
    ]) {
      const e = await refused(`UPDATE bills SET ${set} WHERE account_name = 'a' AND bill_id = '1'`);
      expect(e.code, set).toBe("42501");
      expect(e.message, set).toContain("cannot be changed outside the revision path");
    }
    const [row] = await t.db.$queryRawUnsafe<{ amount: string; balance: string }[]>(
      "SELECT amount::text, balance::text FROM bills WHERE account_name = 'a' AND bill_id = '1'",
    );
    expect(row).toEqual({ amount: "-12.345", balance: "1000.5" });
    expect(await revisions("a")).toEqual([]);
  });

  it("refuses a change of scale too (1000.5 -> 1000.50 is not what the exchange sent)", async () => {
    expect(
      (await refused("UPDATE bills SET balance = '1000.50' WHERE account_name = 'a' AND bill_id = '1'")).code,
    ).toBe("42501");
  });

  it("refuses DELETE and TRUNCATE", async () => {
    const del = await refused("DELETE FROM bills WHERE account_name = 'a' AND bill_id = '1'");
    expect(del.message).toContain("bills are never deleted");
    expect((await refused("TRUNCATE bill_rows")).message).toContain("append-only");
    expect((await refused("TRUNCATE bills")).message).toContain("is not a table");
    expect(
      await t.db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM bills WHERE account_name = 'a'"),
    ).toEqual([{ n: 2 }]);
  });

  it("refuses changing a bill's identity", async () => {
    expect(
      (await refused("UPDATE bills SET bill_id = '3' WHERE account_name = 'a' AND bill_id = '2'")).message,
    ).toContain("never change");
  });

  it("lets last_seen_at move (a re-read that confirms the bill is not a change)", async () => {
    await t.db.$executeRawUnsafe("UPDATE bills SET last_seen_at = now() WHERE account_name = 'a'");
    expect(await revisions("a")).toEqual([]);
  });

  it("the revision path (a newer version from the exchange) updates the bill and files the old version", async () => {
    const r = await write("a", [
      bill("1", { amount: "-12.346", balance: "1000.499" }),
      bill("2", { cTimeMs: 1700000000200 }),
    ]);
    expect(r).toMatchObject({ inserted: 0, revised: 1, upserted: 2 });
    expect((await revisions("a")).map(({ bill_id, amount, balance }) => ({ bill_id, amount, balance }))).toEqual([
      { bill_id: "1", amount: "-12.345", balance: "1000.5" },
    ]);
    const [row] = await t.db.$queryRawUnsafe<{ amount: string }[]>(
      "SELECT amount::text FROM bills WHERE account_name = 'a' AND bill_id = '1'",
    );
    expect(row!.amount).toBe("-12.346");
  });

  it("even a writer that declares the revision path by hand cannot skip the revision record", async () => {
    const before = (await revisions("a")).length;
    await t.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SELECT set_config('ledger_sync.revision', 'on', true)");
      await tx.$executeRawUnsafe("UPDATE bills SET amount = 5 WHERE account_name = 'a' AND bill_id = '2'");
    });
    const after = await revisions("a");
    expect(after.length).toBe(before + 1);
    expect(after.at(-1)).toMatchObject({ bill_id: "2", amount: "-12.345" });
  });

  it("bill_revisions is append-only", async () => {
    expect((await refused("UPDATE bill_revisions SET amount = 0")).message).toContain("append-only");
    expect((await refused("DELETE FROM bill_revisions")).message).toContain("append-only");
    expect((await refused("TRUNCATE bill_revisions")).message).toContain("append-only");
  });
});

describe("the incremental verify's starting point", () => {
  const state = async () =>
    (
      await t.db.$queryRawUnsafe<{ check_from_ms: string; write_seq: string }[]>(
        "SELECT check_from_ms::text, write_seq::text FROM verify_state WHERE account_name = 'v'",
      )
    )[0];

  it("moves back to the oldest bill added or changed, and only then", async () => {
    await write("v", [bill("10", { cTimeMs: 5000 }), bill("11", { cTimeMs: 6000 })]);
    await t.db.$executeRawUnsafe("INSERT INTO verify_state (account_name, check_from_ms) VALUES ('v', 9000)");
    // A re-read of known bills (the lookback) changes nothing.
    await write("v", [bill("10", { cTimeMs: 5000 }), bill("11", { cTimeMs: 6000 })]);
    expect(await state()).toEqual({ check_from_ms: "9000", write_seq: "0" });
    // A late bill behind the starting point sends it back.
    await write("v", [bill("12", { cTimeMs: 7000 })]);
    expect(await state()).toEqual({ check_from_ms: "7000", write_seq: "1" });
    // A changed bill counts at its old time and its new time.
    await write("v", [bill("10", { cTimeMs: 8000 })]);
    expect(await state()).toEqual({ check_from_ms: "5000", write_seq: "2" });
  });
});

describe("sync_runs", () => {
  it("records each run: account, stream, window, pages, bills new/changed, start/finish, outcome", async () => {
    const sandbox = await startSandbox({ seed: 7, billCount: 1500, limits: null });
    try {
      const first = await syncFromSandbox(t.db, sandbox, "runs");
      const second = await syncFromSandbox(t.db, sandbox, "runs");
      const runs = await t.db.$queryRawUnsafe<Record<string, unknown>[]>(
        `SELECT stream, window_from_ms::text AS from_ms, window_to_ms::text AS to_ms, window_from, pages, records_fetched, records_new, records_changed,
                quarantined, started_at <= finished_at AS ordered, outcome, error
         FROM sync_runs WHERE account_name = 'runs' ORDER BY id`,
      );
      expect(runs).toEqual([
        {
          stream: "bills",
          from_ms: String(first.fromMs),
          to_ms: String(first.toMs),
          window_from: new Date(first.fromMs),
          pages: first.requests,
          records_fetched: first.billsFetched,
          records_new: 1500,
          records_changed: 0,
          quarantined: 0,
          ordered: true,
          outcome: "ok",
          error: null,
        },
        {
          stream: "bills",
          from_ms: String(second.fromMs),
          to_ms: String(second.toMs),
          window_from: new Date(second.fromMs),
          pages: second.requests,
          records_fetched: second.billsFetched,
          records_new: 0,
          records_changed: 0,
          quarantined: 0,
          ordered: true,
          outcome: "ok",
          error: null,
        },
      ]);
    } finally {
      await sandbox.close();
    }
  });

  it("records a failed run with its error, and refuses deletes", async () => {
    const sandbox = await startSandbox({ seed: 7, billCount: 10, limits: null });
    await sandbox.close();
    // The exchange is gone: connection refused on every attempt.
    await expect(syncFromSandbox(t.db, sandbox, "gone", { timeoutMs: 200 })).rejects.toThrow();
    const runs = await t.db.$queryRawUnsafe<{ outcome: string; error: string | null; finished: boolean }[]>(
      "SELECT outcome, error, finished_at IS NOT NULL AS finished FROM sync_runs WHERE account_name = 'gone'",
    );
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ outcome: "failed", finished: true });
    expect(runs[0]!.error).toBeTruthy();
    expect((await refused("DELETE FROM sync_runs")).message).toContain("append-only");
  });
});
