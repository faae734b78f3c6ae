// The bills stream through the v3 ledger endpoint (BILLS_SOURCE=v3) against the sandbox over HTTP
// and a real PostgreSQL: exact copies in both orders, with bursts and faults; ranges over 100 days
// split; the history horizon learnt; a crash mid-cursor resumes from the last committed page; and
// switching an account between v2 and v3 neither loses nor duplicates a bill.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxExchangeEnv, startSandbox } from "../../../src/sandbox/index.ts";
import { readCursor } from "../../../src/store/cursors.ts";
import { runCli } from "../../support/cli.ts";
import { startCli, waitFor } from "../../support/processes.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { asRows, storedBills, syncFromSandbox } from "../../support/sandbox-sync.ts";

const DAY = 86_400_000;
let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

const sources = (account: string) =>
  t.db.$queryRawUnsafe<{ source: string; n: number }[]>(
    "SELECT source, count(*)::int AS n FROM bills WHERE account_name = $1 GROUP BY source ORDER BY source",
    account,
  );

describe("bills through the v3 income endpoint", () => {
  it.each(["desc", "asc"] as const)(
    "backfills exactly the truth (%s, 150-bill milliseconds, 3% faults), one request per 100 bills",
    async (incomeOrdering) => {
      const sandbox = await startSandbox({
        seed: 21,
        billCount: 3000,
        limits: null,
        incomeOrdering,
        bursts: 2,
        burstSize: 150,
        faults: { rate: 0.03, kinds: ["429", "500-html", "truncated", "reset"] },
      });
      const account = `v3_${incomeOrdering}`;
      try {
        const s = await syncFromSandbox(t.db, sandbox, account, { source: "v3" });
        const truth = sandbox.truth();
        expect(await storedBills(t.db, account)).toEqual(asRows(truth));
        expect(s).toMatchObject({ inserted: truth.length, revised: 0, quarantined: 0 });
        expect(await sources(account)).toEqual([{ source: "v3", n: truth.length }]);
        // Every page but each range's last is full: about one request per 100 bills.
        expect(s.requests).toBeLessThanOrEqual(Math.ceil(truth.length / 100) + 2);
        const again = await syncFromSandbox(t.db, sandbox, account, { source: "v3", fromMs: truth[0]!.cTimeMs });
        expect(again).toMatchObject({ inserted: 0, revised: 0 });
      } finally {
        await sandbox.close();
      }
    },
  );

  it("splits a history longer than 100 days into ranges, and keeps to the exchange's history depth", async () => {
    const now = Date.now();
    const sandbox = await startSandbox({
      seed: 22,
      billCount: 1500,
      limits: null,
      startMs: now - 250 * DAY,
      endMs: now - 1000,
      historyDays: 200,
      refusalStatus: 200,
    });
    try {
      const s = await syncFromSandbox(t.db, sandbox, "v3_long", { source: "v3" });
      const horizon = sandbox.retrievableFromMs()!;
      const kept = sandbox.truth().filter((b) => b.cTimeMs >= horizon + 60_000);
      const stored = new Set((await storedBills(t.db, "v3_long")).map((b) => b.billId));
      for (const b of kept) expect(stored.has(b.billId)).toBe(true);
      expect(s.windows).toBeGreaterThanOrEqual(2);
      expect(s.historyFromMs).not.toBeNull();
      expect(s.exchange.historyMs).toBeGreaterThan(0);
    } finally {
      await sandbox.close();
    }
  });

  it("resumes a crashed run from its last committed page, not from the range's start", async () => {
    const sandbox = await startSandbox({ seed: 23, billCount: 2000, limits: null });
    const account = "v3_crash";
    const truth = sandbox.truth();
    try {
      // Stopped after its fifth request: five pages committed, the range not done.
      const stop = new AbortController();
      const watch = setInterval(() => sandbox.stats().incomeRequests >= 5 && stop.abort(new Error("crash")), 1);
      await expect(syncFromSandbox(t.db, sandbox, account, { source: "v3", signal: stop.signal })).rejects.toThrow();
      clearInterval(watch);
      const resume = await t.db.$queryRawUnsafe<{ resume: { nextKey: unknown } | null }[]>(
        "SELECT resume FROM sync_state WHERE account_name = $1 AND stream = 'bills'",
        account,
      );
      expect(resume[0]!.resume?.nextKey).toBeTruthy();
      const before = (await storedBills(t.db, account)).length;
      expect(before).toBeGreaterThanOrEqual(400);
      sandbox.resetStats();
      await syncFromSandbox(t.db, sandbox, account, { source: "v3" });
      expect(await storedBills(t.db, account)).toEqual(asRows(truth));
      // Only the pages not committed before were asked again.
      expect(sandbox.stats().incomeRequests).toBeLessThanOrEqual(Math.ceil((truth.length - before) / 100) + 2);
      expect(await readCursor(t.db, account, "bills")).toBeGreaterThanOrEqual(truth.at(-1)!.cTimeMs);
    } finally {
      await sandbox.close();
    }
  });

  it("switching an account from v2 to v3 and back neither loses nor duplicates a bill", async () => {
    const sandbox = await startSandbox({ seed: 24, billCount: 1500, limits: null });
    const account = "v3_switch";
    try {
      await syncFromSandbox(t.db, sandbox, account, { source: "v2" });
      for (let i = 0; i < 20; i++)
        sandbox.appendBill({ amount: String(i + 1), businessType: i % 2 ? "transfer_in" : "position_funding" });
      await syncFromSandbox(t.db, sandbox, account, { source: "v3" });
      for (let i = 0; i < 20; i++) sandbox.appendBill({ amount: `-${i + 1}` });
      await syncFromSandbox(t.db, sandbox, account, { source: "v2" });
      const truth = sandbox.truth();
      expect(await storedBills(t.db, account)).toEqual(asRows(truth));
      const bySource = Object.fromEntries((await sources(account)).map((r) => [r.source, r.n]));
      expect(bySource).toEqual({ v2: truth.length - 20, v3: 20 });
      // v3 filled the transfer reasons it read; v2 (which leaves them out) kept them.
      const reasons = await t.db.$queryRawUnsafe<{ n: number }[]>(
        "SELECT count(*)::int AS n FROM bills WHERE account_name = $1 AND transfer_reason = 'USER_TRANSFER'",
        account,
      );
      expect(reasons[0]!.n).toBeGreaterThanOrEqual(10);
    } finally {
      await sandbox.close();
    }
  });

  it("is what `sync --once` reads with BILLS_SOURCE=v3", async () => {
    const sandbox = await startSandbox({ seed: 25, billCount: 800, limits: null });
    try {
      const env = {
        DATABASE_URL: t.url,
        ...sandboxExchangeEnv(sandbox.url),
        ACCOUNT_NAME: "v3_cli",
        BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
        BILLS_SOURCE: "v3",
      };
      const r = await runCli(["sync", "--once", "--json"], env);
      expect(r.code, r.stderr).toBe(0);
      expect(sandbox.stats()).toMatchObject({ billsRequests: 0 });
      expect(sandbox.stats().incomeRequests).toBeGreaterThan(0);
      expect(await storedBills(t.db, "v3_cli")).toEqual(asRows(sandbox.truth()));
      expect(await sources("v3_cli")).toEqual([{ source: "v3", n: 800 }]);
    } finally {
      await sandbox.close();
    }
  });

  it("incremental runs pick up new bills and late ones within the lookback; a page cap changes nothing", async () => {
    const now = Date.now();
    const sandbox = await startSandbox({
      seed: 26,
      billCount: 900,
      limits: null,
      startMs: now - 3 * DAY,
      endMs: now - 60_000,
      pageCap: 30,
    });
    const account = "v3_incremental";
    try {
      await syncFromSandbox(t.db, sandbox, account, { source: "v3", lookbackMs: 600_000 });
      expect(await storedBills(t.db, account)).toEqual(asRows(sandbox.truth()));
      for (let i = 0; i < 12; i++) sandbox.appendBill({ amount: String(i + 1) });
      // One more the exchange files late: not served by the next run, which moves the cursor past it.
      const late = sandbox.appendBill({ amount: "7" });
      sandbox.hideBill(late.billId);
      const s = await syncFromSandbox(t.db, sandbox, account, { source: "v3", lookbackMs: 600_000 });
      expect(s.inserted).toBe(12);
      expect(await readCursor(t.db, account, "bills")).toBeGreaterThan(late.cTimeMs);
      sandbox.revealBill(late.billId);
      const again = await syncFromSandbox(t.db, sandbox, account, { source: "v3", lookbackMs: 600_000 });
      expect(again.inserted).toBe(1);
      expect(await storedBills(t.db, account)).toEqual(asRows(sandbox.truth()));
    } finally {
      await sandbox.close();
    }
  });

  it("a `sync --once` killed with SIGKILL mid-cursor resumes from its last committed page", async () => {
    // A budget of 10 pages a second, so that the kill lands mid-range.
    const limits = { ipWeight: 1000, uidWeight: 50, windowMs: 1000 };
    const sandbox = await startSandbox({ seed: 27, billCount: 4000, limits });
    try {
      const env = {
        DATABASE_URL: t.url,
        ...sandboxExchangeEnv(sandbox.url),
        ACCOUNT_NAME: "v3_sigkill",
        BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
        BILLS_SOURCE: "v3",
        RATE_LIMIT_IP_WEIGHT: "1000",
        RATE_LIMIT_UID_WEIGHT: "50",
        RATE_LIMIT_WINDOW_MS: "1000",
      };
      const run = startCli(["sync", "--once"], env);
      await waitFor("15 pages", async () => sandbox.stats().incomeRequests >= 15, 60_000, 20);
      run.signal("SIGKILL");
      await run.exited;
      const kept = (await storedBills(t.db, "v3_sigkill")).length;
      const resume = await t.db.$queryRawUnsafe<{ resume: { nextKey: unknown } | null }[]>(
        "SELECT resume FROM sync_state WHERE account_name = 'v3_sigkill' AND stream = 'bills'",
      );
      expect(kept).toBeGreaterThanOrEqual(1000);
      expect(resume[0]!.resume?.nextKey).toBeTruthy();
      await new Promise((r) => setTimeout(r, limits.windowMs)); // the killed run's window passes
      sandbox.resetStats();
      const again = await runCli(["sync", "--once"], env);
      expect(again.code, again.stderr).toBe(0);
      expect(await storedBills(t.db, "v3_sigkill")).toEqual(asRows(sandbox.truth()));
      // The pages committed before the kill were not asked again (a page in flight may be).
      expect(sandbox.stats().incomeRequests).toBeLessThanOrEqual(Math.ceil((4000 - kept) / 100) + 2);
      const runs = await t.db.$queryRawUnsafe<{ outcome: string }[]>(
        "SELECT outcome FROM sync_runs WHERE account_name = 'v3_sigkill' AND stream = 'bills' ORDER BY started_at",
      );
      expect(runs.map((r) => r.outcome)).toEqual(["interrupted", "ok"]);
    } finally {
      await sandbox.close();
    }
  });
});
