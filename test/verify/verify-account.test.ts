// verify's cross-checks, its incremental form and --repair, on real PostgreSQL with a sandbox
// exchange over HTTP: clean books pass every check; each kind of damage fails the check that
// should catch it, with the figures; the worker's incremental form re-checks what is written behind
// it; --repair brings back a deleted bill and undoes an altered one.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bill } from "../../src/exchange/bill-item.ts";
import type { ExchangeClient } from "../../src/exchange/http-client.ts";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { commitBillsWindow } from "../../src/store/bills-window.ts";
import { syncAccountBills } from "../../src/streams/bills/index.ts";
import { syncAccountSnapshots } from "../../src/streams/snapshots/index.ts";
import { verifyIncrementally } from "../../src/verify/incremental.ts";
import type { AccountReport } from "../../src/verify/report.ts";
import { verifyAccount } from "../../src/verify/verify-account.ts";
import { runCli } from "../support/cli.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { tamper } from "../support/tamper.ts";

const ACCOUNT = "books";
const COIN_NAMES = { "2": "USDT", "1": "USDC" };
const LOOKBACK = 600_000;
const silent = pino({ level: "silent" });

let t: MigratedDb;
let sandbox: Sandbox;
let client: ExchangeClient;

const syncBills = () =>
  syncAccountBills({
    db: t.db,
    client,
    logger: silent,
    accountName: ACCOUNT,
    backfillFromMs: sandbox.truth()[0]!.cTimeMs,
    lookbackMs: LOOKBACK,
  });
const snapshot = () =>
  syncAccountSnapshots({
    db: t.db,
    client,
    logger: silent,
    accountName: ACCOUNT,
    coinIds: ["2", "1"],
    retentionDays: undefined,
  });
const verify = (o: { coinNames?: Record<string, string>; now?: number; toMs?: number } = {}) =>
  verifyAccount(t.db, {
    account: ACCOUNT,
    coinNames: o.coinNames ?? COIN_NAMES,
    lookbackMs: LOOKBACK,
    now: o.now,
    toMs: o.toMs,
  }).then((v) => v.report);
const statuses = (r: AccountReport) => r.checks.map((c) => `${c.check} ${c.subject}: ${c.status}`).sort();
const failing = (r: AccountReport) => r.checks.filter((c) => c.status !== "pass" && c.status !== "skipped");

beforeAll(async () => {
  t = await createMigratedDb();
  sandbox = await startSandbox({ seed: 17, billCount: 4000, limits: null, accountEvolution: "manual" });
  client = sandboxClient(sandbox);
  await syncBills();
  await snapshot();
  // More history after the first snapshot, then a second snapshot: the counters moved.
  sandbox.appendBill({ coin: "USDT", businessType: "deposit", amount: "250.5" });
  sandbox.appendBill({ coin: "USDT", businessType: "position_funding", amount: "-0.0123" });
  sandbox.appendBill({ coin: "USDC", businessType: "withdraw", amount: "-10" });
  await syncBills();
  await snapshot();
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  await t.close();
});

/** A stored bill of the coin and type, not the coin's last one. */
async function storedBill(coin: string, businessType: string) {
  const rows = await t.db.$queryRawUnsafe<{ bill_id: string; amount: string; balance: string }[]>(
    `SELECT bill_id, amount::text, balance::text FROM bills WHERE account_name = $1 AND coin = $2 AND business_type = $3
     ORDER BY created_at_ms, bill_id::numeric LIMIT 1 OFFSET 3`,
    ACCOUNT,
    coin,
    businessType,
  );
  return rows[0]!;
}

describe("verify on clean books", () => {
  it("passes every check for every coin, with the figures", async () => {
    const r = await verify();
    expect(failing(r)).toEqual([]);
    expect(statuses(r)).toEqual([
      "audit-trail-guards database: pass",
      "balance-continuity USDC: pass",
      "balance-continuity USDT: pass",
      "balance-vs-collateral USDC (coin id 1): pass",
      "balance-vs-collateral USDT (coin id 2): pass",
      "cum-vs-bills USDC (coin id 1): pass",
      "cum-vs-bills USDT (coin id 2): pass",
      "cursor-lag bills: pass",
      "quarantine account: pass",
      "seal-chain account: skipped",
      "wallet account: skipped",
    ]);
    expect(r).toMatchObject({ ok: true, failures: 0 });
    const cum = r.checks.find((c) => c.check === "cum-vs-bills" && c.subject.startsWith("USDT"))!;
    expect(cum.summary).toContain("14 counters match");
  });

  it("without COIN_NAMES, says the collateral checks were skipped and why (the rest still pass)", async () => {
    const r = await verify({ coinNames: {} });
    // (The wallet check is skipped too here: these snapshots file no readings without COIN_NAMES.)
    const skipped = r.checks.filter(
      (c) => c.status === "skipped" && ["balance-vs-collateral", "cum-vs-bills"].includes(c.check),
    );
    expect(skipped).toHaveLength(4);
    expect(skipped[0]!.summary).toContain("set COIN_NAMES");
    expect(r.ok).toBe(true);
  });
});

describe("verify on damaged books", () => {
  it("an altered deposit amount breaks continuity and the cum_deposit_amount counter check", async () => {
    const b = await storedBill("USDT", "deposit");
    await tamper(
      t.db,
      "UPDATE bills SET amount = amount + 1 WHERE account_name = $1 AND bill_id = $2",
      ACCOUNT,
      b.bill_id,
    );
    try {
      const r = await verify();
      expect(r.ok).toBe(false);
      const continuity = r.checks.find((c) => c.check === "balance-continuity" && c.subject === "USDT")!;
      expect(continuity.status).toBe("fail");
      expect((continuity.details as { breaks: { billId: string }[] }).breaks.map((x) => x.billId)).toEqual([b.bill_id]);
      const cum = r.checks.find((c) => c.check === "cum-vs-bills" && c.subject.startsWith("USDT"))!;
      expect(cum.status).toBe("fail");
      expect((cum.details as { mismatches: { counter: string }[] }).mismatches.map((m) => m.counter)).toEqual([
        "cum_deposit_amount",
      ]);
      // The other coin is untouched.
      expect(r.checks.filter((c) => c.subject.startsWith("USDC")).every((c) => c.status === "pass")).toBe(true);
    } finally {
      await tamper(
        t.db,
        "UPDATE bills SET amount = $3::numeric WHERE account_name = $1 AND bill_id = $2",
        ACCOUNT,
        b.bill_id,
        b.amount,
      );
    }
  });

  it("a balance that differs from the collateral amount at the snapshot fails balance-vs-collateral", async () => {
    // The bill the clean check matched: the last one at or before the newest snapshot the bills cursor covers.
    const clean = (await verify()).checks.find(
      (c) => c.check === "balance-vs-collateral" && c.subject.startsWith("USDC"),
    )!;
    const { billId, balance } = clean.details as { billId: string; balance: string };
    await tamper(
      t.db,
      "UPDATE bills SET balance = balance + 0.01 WHERE account_name = $1 AND bill_id = $2",
      ACCOUNT,
      billId,
    );
    try {
      const check = (await verify()).checks.find(
        (c) => c.check === "balance-vs-collateral" && c.subject.startsWith("USDC"),
      )!;
      expect(check.status, JSON.stringify(check)).toBe("fail");
      expect(check.summary).toContain(billId);
    } finally {
      await tamper(
        t.db,
        "UPDATE bills SET balance = $3::numeric WHERE account_name = $1 AND bill_id = $2",
        ACCOUNT,
        billId,
        balance,
      );
    }
  });

  it("anything in quarantine fails the quarantine check with the count and reason", async () => {
    await t.db.$executeRawUnsafe(
      "INSERT INTO quarantine (account_name, stream, reason, raw_text, raw_hash, context) VALUES ($1, 'bills', 'amount \"abc\" is not a decimal', '{}', 'h1', '{}')",
      ACCOUNT,
    );
    try {
      const check = (await verify()).checks.find((c) => c.check === "quarantine")!;
      expect(check.status).toBe("fail");
      expect(check.summary).toContain("1 record(s)");
      expect(check.summary).toContain('amount "abc" is not a decimal');
    } finally {
      await t.db.$executeRawUnsafe("DELETE FROM quarantine WHERE account_name = $1", ACCOUNT);
    }
  });

  it("a cursor behind by more than the lookback fails cursor-lag; a range that ends before the cursor passes", async () => {
    const [c] = await t.db.$queryRawUnsafe<{ ms: string }[]>(
      "SELECT cursor_ms::text AS ms FROM sync_state WHERE account_name = $1 AND stream = 'bills'",
      ACCOUNT,
    );
    const cursor = Number(c!.ms);
    const late = (await verify({ now: cursor + LOOKBACK + 1 })).checks.find((x) => x.check === "cursor-lag")!;
    expect(late.status).toBe("fail");
    expect(late.summary).toContain("more than the lookback");
    expect((await verify({ now: cursor + LOOKBACK })).checks.find((x) => x.check === "cursor-lag")!.status).toBe(
      "pass",
    );
    expect(
      (await verify({ now: cursor + 10 * LOOKBACK, toMs: cursor })).checks.find((x) => x.check === "cursor-lag")!
        .status,
    ).toBe("pass");
    expect((await verify({ toMs: cursor + 1 })).checks.find((x) => x.check === "cursor-lag")!.status).toBe("fail");
  });
});

describe("the worker's incremental verify", () => {
  const late = (id: string, cTimeMs: number): Bill => ({
    billId: id,
    coin: "USDT",
    symbol: "",
    businessType: "deposit",
    amount: "1",
    balance: "123.456",
    fillFee: "0",
    cTimeMs,
    raw: { billId: id },
  });

  it("checks only what is new, re-checks what is written behind it, and keeps reporting a break until it is gone", async () => {
    const first = await verifyIncrementally(t.db, { account: ACCOUNT, coinNames: COIN_NAMES, lookbackMs: LOOKBACK });
    expect(first).toMatchObject({ checkedFromMs: 0, advanced: true });
    expect(first.report.ok).toBe(true);
    const lastMs = Math.max(...sandbox.truth().map((b) => b.cTimeMs));
    expect(first.nextFromMs).toBe(lastMs + 1);

    // New bills: the next run starts where the last one stopped, and its cum check starts at the last snapshot checked.
    sandbox.appendBill({ coin: "USDT", businessType: "deposit", amount: "7" });
    await syncBills();
    await snapshot();
    const second = await verifyIncrementally(t.db, { account: ACCOUNT, coinNames: COIN_NAMES, lookbackMs: LOOKBACK });
    expect(second.checkedFromMs).toBe(lastMs + 1);
    expect(second.report.ok).toBe(true);
    const continuity = second.report.checks.find((c) => c.check === "balance-continuity")!;
    expect(continuity).toMatchObject({ subject: "USDT", status: "pass" });
    expect((continuity.details as { pairs: number }).pairs).toBe(1);
    expect(
      second.report.checks.find((c) => c.check === "cum-vs-bills" && c.subject.startsWith("USDT"))!.summary,
    ).toContain("since the last passing check");

    // A bill written far behind the starting point (a late bill, a backfill) sends the next run back to it.
    const middle = sandbox.truth()[2000]!;
    await commitBillsWindow(t.db, {
      accountName: ACCOUNT,
      stream: "bills",
      cursorStream: null,
      cursorMs: 0,
      bills: [late("999999999999999999999", middle.cTimeMs)],
      rejected: [],
      context: {},
    });
    try {
      const third = await verifyIncrementally(t.db, { account: ACCOUNT, coinNames: COIN_NAMES, lookbackMs: LOOKBACK });
      expect(third.checkedFromMs).toBe(middle.cTimeMs);
      expect(third.report.ok).toBe(false);
      const breaks = (
        third.report.checks.find((c) => c.check === "balance-continuity" && c.subject === "USDT")!.details as {
          breaks: { billId: string; previousBillId: string }[];
        }
      ).breaks;
      expect(
        breaks.some((b) => b.billId === "999999999999999999999" || b.previousBillId === "999999999999999999999"),
      ).toBe(true);
      // Still there on the next run: a break stays under check until it is repaired.
      const fourth = await verifyIncrementally(t.db, { account: ACCOUNT, coinNames: COIN_NAMES, lookbackMs: LOOKBACK });
      expect(fourth.report.ok).toBe(false);
      expect(fourth.checkedFromMs).toBeLessThanOrEqual(middle.cTimeMs);
      const [state] = await t.db.$queryRawUnsafe<{ outcome: string; failures: number }[]>(
        "SELECT outcome, failures FROM verify_state WHERE account_name = $1",
        ACCOUNT,
      );
      expect(state).toMatchObject({ outcome: "fail" });
      expect(state!.failures).toBeGreaterThan(0);
    } finally {
      await tamper(t.db, "DELETE FROM bills WHERE account_name = $1 AND bill_id = '999999999999999999999'", ACCOUNT);
      await t.db.$executeRawUnsafe("UPDATE verify_state SET check_from_ms = 0 WHERE account_name = $1", ACCOUNT);
    }
    const after = await verifyIncrementally(t.db, { account: ACCOUNT, coinNames: COIN_NAMES, lookbackMs: LOOKBACK });
    expect(after.report.ok).toBe(true);
  });
});

describe("ledger-sync verify --repair", () => {
  it("re-fetches the windows around each break: a deleted bill comes back, an altered one is corrected (old content kept)", async () => {
    const env = {
      DATABASE_URL: t.url,
      ...sandboxExchangeEnv(sandbox.url),
      ACCOUNT_NAME: ACCOUNT,
      COIN_NAMES: "2=USDT,1=USDC",
      SYNC_LOOKBACK_MS: String(LOOKBACK),
    };
    // A bill that moves its balance: a missing bill of amount 0 breaks no continuity (docs/accounting.md,
    // "Proving the books"), and which bill sits at an index depends on the date the history ends.
    const deleted = sandbox
      .truth()
      .slice(1000)
      .find((b) => Number(b.amount) !== 0)!;
    const altered = sandbox.truth()[3000]!;
    await tamper(t.db, "DELETE FROM bills WHERE account_name = $1 AND bill_id = $2", ACCOUNT, deleted.billId);
    await tamper(
      t.db,
      "UPDATE bills SET amount = amount - 5 WHERE account_name = $1 AND bill_id = $2",
      ACCOUNT,
      altered.billId,
    );

    const before = await runCli(["verify", "--account", ACCOUNT, "--json"], env);
    expect(before.code).toBe(1);
    const repaired = await runCli(["verify", "--account", ACCOUNT, "--repair", "--json"], env);
    expect(repaired.code, repaired.stderr + repaired.stdout).toBe(0);
    const report = JSON.parse(repaired.stdout) as {
      ok: boolean;
      accounts: (AccountReport & {
        repair: { windows: unknown[]; restored: number; revised: number; failuresBefore: number };
      })[];
    };
    expect(report.ok).toBe(true);
    expect(report.accounts[0]!.repair).toMatchObject({ restored: 1, revised: 1 });
    expect(report.accounts[0]!.repair.failuresBefore).toBeGreaterThanOrEqual(2);

    const rows = await t.db.$queryRawUnsafe<{ bill_id: string; amount: string; balance: string }[]>(
      "SELECT bill_id, amount::text, balance::text FROM bills WHERE account_name = $1 AND bill_id IN ($2, $3) ORDER BY created_at_ms",
      ACCOUNT,
      deleted.billId,
      altered.billId,
    );
    expect(rows).toEqual([
      { bill_id: deleted.billId, amount: deleted.amount, balance: deleted.balance },
      { bill_id: altered.billId, amount: altered.amount, balance: altered.balance },
    ]);
    // The altered content is not lost: it is the revision the correction replaced.
    const [revision] = await t.db.$queryRawUnsafe<{ amount: string }[]>(
      "SELECT amount::text FROM bill_revisions WHERE account_name = $1 AND bill_id = $2",
      ACCOUNT,
      altered.billId,
    );
    expect(revision!.amount).not.toBe(altered.amount);
    // The re-reads are in the trail and moved no bookmark.
    const runs = await t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM sync_runs WHERE account_name = $1 AND stream = 'bills-repair' AND outcome = 'ok'",
      ACCOUNT,
    );
    expect(runs[0]!.n).toBeGreaterThanOrEqual(1);
    const streams = await t.db.$queryRawUnsafe<{ stream: string }[]>(
      "SELECT stream FROM sync_state WHERE account_name = $1 ORDER BY 1",
      ACCOUNT,
    );
    expect(streams.map((s) => s.stream)).toEqual(["bills", "snapshots:1", "snapshots:2"]);
  });
});
