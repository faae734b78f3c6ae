// The wallet check on real PostgreSQL with the sandbox exchange over HTTP: the balance the exchange
// reports (a snapshot's collateral) against the balance the stored bills calculate, at zero
// tolerance. Clean books tie; the newest bill removed or its balance altered fails naming the coin,
// both figures, the difference and the window it arose in; bills filed while a check runs, or read
// from the exchange after the stored cursor, do not make it flap.
import { Decimal } from "decimal.js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExchangeClient } from "../../src/exchange/http-client.ts";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { readCursor } from "../../src/store/cursors.ts";
import { pendingReadings, readWalletChecks } from "../../src/store/wallet-checks.ts";
import { syncAccountBills } from "../../src/streams/bills/index.ts";
import { syncAccountSnapshots } from "../../src/streams/snapshots/index.ts";
import { readExchangeBills } from "../../src/verify/exchange-read.ts";
import type { CheckResult } from "../../src/verify/report.ts";
import { settleWallet, walletChecks, type ReadUnstored } from "../../src/verify/wallet.ts";
import { WALLET_SLACK_MS } from "../../src/verify/wallet-check.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { sandboxClient } from "../support/sandbox-client.ts";
import { tamper } from "../support/tamper.ts";

const ACCOUNT = "wallet";
const COIN_NAMES = { "2": "USDT", "1": "USDC" };
const silent = pino({ level: "silent" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    lookbackMs: 600_000,
  });

/** A snapshot of both coins (it files the wallet check's readings); returns the newest reading's instant. */
async function snapshot(): Promise<number> {
  await syncAccountSnapshots({
    db: t.db,
    client,
    logger: silent,
    accountName: ACCOUNT,
    coinIds: ["2", "1"],
    coinNames: COIN_NAMES,
    retentionDays: undefined,
  });
  return (await pendingReadings(t.db, ACCOUNT)).at(-1)!.observedAtMs;
}

const readUnstored: ReadUnstored = async (fromMs, toMs) => [
  ...(
    await readExchangeBills({ db: t.db, client, logger: silent, account: ACCOUNT, source: "v2", fromMs, toMs })
  ).bills.values(),
];

const cursor = () => readCursor(t.db, ACCOUNT, "bills");
const check = async (withExchange: boolean) =>
  walletChecks(t.db, {
    account: ACCOUNT,
    coinNames: COIN_NAMES,
    billsCursorMs: await cursor(),
    ...(withExchange ? { readUnstored } : {}),
  });
const statuses = (checks: CheckResult[]) => checks.map((c) => `${c.check} ${c.subject}: ${c.status}`).sort();

/** The newest stored bill of a coin. */
async function newest(coin: string) {
  const [row] = await t.db.$queryRawUnsafe<{ bill_id: string; amount: string; balance: string; at: string }[]>(
    `SELECT bill_id, amount::text, balance::text, created_at_ms::text AS at FROM bills
     WHERE account_name = $1 AND coin = $2 ORDER BY created_at_ms DESC, bill_id::numeric DESC LIMIT 1`,
    ACCOUNT,
    coin,
  );
  return row!;
}

let firstReadingMs: number;

beforeAll(async () => {
  t = await createMigratedDb();
  sandbox = await startSandbox({ seed: 29, billCount: 1500, limits: null, accountEvolution: "manual" });
  client = sandboxClient(sandbox);
  await syncBills();
  firstReadingMs = await snapshot();
  // The bills sync must read past the reading by the slack before the store alone can compare it.
  await sleep(WALLET_SLACK_MS + 200);
  await syncBills();
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  await t.close();
});

describe("the wallet check on clean books", () => {
  it("ties every coin from the store alone once the bills sync has read past the reading", async () => {
    const checks = await check(false);
    expect(statuses(checks)).toEqual(["wallet USDC (collateral): pass", "wallet USDT (collateral): pass"]);
    const usdt = checks.find((c) => c.subject.startsWith("USDT"))!;
    const last = await newest("USDT");
    expect(usdt.details).toMatchObject({ reported: last.balance, calculated: last.balance, difference: "0" });
  });

  it("the worker files a reading only once the bills sync has read past it by the lookback", async () => {
    const c = (await cursor())!;
    const early = await settleWallet(t.db, {
      account: ACCOUNT,
      coinNames: COIN_NAMES,
      billsCursorMs: c,
      lookbackMs: c - firstReadingMs,
    });
    expect(early).toEqual([]);
    const readings = await pendingReadings(t.db, ACCOUNT);
    expect(readings.map((r) => r.coin).sort()).toEqual(["USDC", "USDT"]);
    const settled = await settleWallet(t.db, {
      account: ACCOUNT,
      coinNames: COIN_NAMES,
      billsCursorMs: c,
      lookbackMs: 0,
    });
    expect(settled.map((r) => `${r.reading.coin} ${r.status}`).sort()).toEqual(["USDC tied", "USDT tied"]);
    expect(await pendingReadings(t.db, ACCOUNT)).toEqual([]);
    const filed = await readWalletChecks(t.db, ACCOUNT);
    const at = (coin: string) => readings.find((r) => r.coin === coin)!.observedAtMs;
    expect(filed.map((w) => [w.reading.coin, w.status, w.lastTiedAtMs])).toEqual([
      ["USDC", "tied", at("USDC")],
      ["USDT", "tied", at("USDT")],
    ]);
  });

  it("counts the bills after the stored cursor, read from the exchange, and bills filed during the check", async () => {
    sandbox.appendBill({ coin: "USDT", businessType: "deposit", amount: "12.5" });
    sandbox.appendBill({ coin: "USDC", businessType: "withdraw", amount: "-3.25" });
    await snapshot();
    // Filed right after the reading: inside the clock slack, in the reported figure or not.
    sandbox.appendBill({ coin: "USDT", businessType: "position_funding", amount: "-0.0001" });
    const before = sandbox.stats().billsRequests;
    expect(statuses(await check(true))).toEqual(["wallet USDC (collateral): pass", "wallet USDT (collateral): pass"]);
    // verify's read of the bills after the stored cursor: one request for less than a page.
    expect(sandbox.stats().billsRequests - before).toBe(1);
    // Without the exchange, the newest reading the store covers is the one compared.
    expect(statuses(await check(false))).toEqual(["wallet USDC (collateral): pass", "wallet USDT (collateral): pass"]);
  });
});

describe("the wallet check on damaged books", () => {
  it("fails when the newest bill is missing, naming the coin, both figures, the difference and the window", async () => {
    await syncBills();
    await snapshot();
    await sleep(WALLET_SLACK_MS + 200);
    await syncBills();
    const last = await newest("USDT");
    const before = new Decimal(last.balance).minus(last.amount).toFixed();
    await tamper(t.db, "DELETE FROM bills WHERE account_name = $1 AND bill_id = $2", ACCOUNT, last.bill_id);
    try {
      const checks = await check(false);
      expect(statuses(checks)).toEqual(["wallet USDC (collateral): pass", "wallet USDT (collateral): fail"]);
      const usdt = checks.find((c) => c.subject.startsWith("USDT"))!;
      expect(usdt.details).toMatchObject({ reported: last.balance, calculated: before, difference: last.amount });
      expect(usdt.summary).toContain(`USDT at `);
      expect(usdt.summary).toContain(`difference ${last.amount}`);
      // The window: after a snapshot that still tied, at or before the one that did not.
      const window = (usdt.details as { window: { from: string | null; to: string } }).window;
      expect(window.from).not.toBeNull();
      expect(Date.parse(window.from!)).toBeLessThan(Number(last.at));
      expect(Date.parse(window.to)).toBeGreaterThanOrEqual(Number(last.at));
    } finally {
      // The exchange still serves it: a sync over its millisecond brings it back.
      await syncAccountBills({
        db: t.db,
        client,
        logger: silent,
        accountName: ACCOUNT,
        backfillFromMs: sandbox.truth()[0]!.cTimeMs,
        fromMs: Number(last.at) - 1,
        lookbackMs: 600_000,
      });
    }
    expect(statuses(await check(false))).toEqual(["wallet USDC (collateral): pass", "wallet USDT (collateral): pass"]);
  });

  it("fails when the newest bill's balance is altered, and the worker files it as not tied", async () => {
    const last = await newest("USDC");
    const altered = new Decimal(last.balance).plus("0.00000001").toFixed();
    await tamper(
      t.db,
      "UPDATE bills SET balance = $3::numeric WHERE account_name = $1 AND bill_id = $2",
      ACCOUNT,
      last.bill_id,
      altered,
    );
    try {
      const checks = await check(false);
      const usdc = checks.find((c) => c.subject.startsWith("USDC"))!;
      expect(usdc.status).toBe("fail");
      expect(usdc.details).toMatchObject({ reported: last.balance, calculated: altered, difference: "-0.00000001" });
      await snapshot();
      const reading = (await pendingReadings(t.db, ACCOUNT)).find((r) => r.coin === "USDC")!.observedAtMs;
      // No sync here: its lookback would re-read the bill and restore it. The store is taken as
      // complete up to just past the reading.
      const settled = await settleWallet(t.db, {
        account: ACCOUNT,
        coinNames: COIN_NAMES,
        billsCursorMs: reading + WALLET_SLACK_MS,
        lookbackMs: 0,
      });
      const filed = settled.find((r) => r.reading.coin === "USDC")!;
      expect(filed.status).toBe("not_tied");
      expect(filed.reading.observedAtMs).toBe(reading);
      const row = (await readWalletChecks(t.db, ACCOUNT)).find((w) => w.reading.coin === "USDC")!;
      expect(row.status).toBe("not_tied");
      expect(row.lastTiedAtMs).toBeLessThan(reading);
      // Narrowed between the last tie and this reading.
      expect(row.window!.toMs).toBeLessThanOrEqual(reading);
      expect(row.window!.fromMs).toBeGreaterThanOrEqual(row.lastTiedAtMs!);
    } finally {
      await tamper(
        t.db,
        "UPDATE bills SET balance = $3::numeric WHERE account_name = $1 AND bill_id = $2",
        ACCOUNT,
        last.bill_id,
        last.balance,
      );
    }
  });
});
