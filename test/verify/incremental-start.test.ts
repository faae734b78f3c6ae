// The incremental verify's start reads ahead what verifyAccount asks next (the chain's counts when no
// bill is in its range, the wallet's newest readings, the closes when none overlaps the range), and
// hands them over through an answering Db (store/answered-reads.ts). On real PostgreSQL: whatever is
// answered, the report is the one the database gives; an account with nothing new sends nothing
// more; whatever does not hold (a bill in the range, a close in it, anything else sent first) is read
// from the database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closePeriod } from "../../src/periods/close-period.ts";
import { changedCloseIds } from "../../src/periods/closed-period-check.ts";
import { newestReadings, recordReadings, type WalletReading } from "../../src/store/wallet-checks.ts";
import { beginIncrementalVerify, verifyIncrementally, type IncrementalStart } from "../../src/verify/incremental.ts";
import { verifyAccount } from "../../src/verify/verify-account.ts";
import { COIN_NAMES, JULY, snapshotAt, storeQuietBill, syncedBooks, type Books } from "../periods/fixture.ts";
import { statementsOf } from "../support/statements-sent.ts";

const LOOKBACK = 600_000;
let b: Books;

beforeAll(async () => {
  b = await syncedBooks({ seed: 29, account: "ahead" });
  const closed = await closePeriod(b.t.db, {
    account: b.account,
    period: JULY,
    coinNames: {},
    lookbackMs: LOOKBACK,
    closedBy: "incremental-start-test",
    acceptUntied: "no collateral snapshot paired in this test",
  });
  expect(closed.status).toBe("closed");
});
afterAll(async () => {
  await b.close();
});

const NOW = Date.UTC(2026, 8, 21);
const coinNames: Record<string, string> = {};

/** verifyAccount as verifyIncrementally calls it after `begun`, through `db`. */
const verifyAfter = (begun: IncrementalStart, db: Books["t"]["db"]) =>
  verifyAccount(db, {
    account: b.account,
    fromMs: Number(begun.state.check_from_ms),
    coinNames,
    lookbackMs: LOOKBACK,
    now: NOW,
    rules: begun.state.rules,
    cumFromMs: begun.state.cum_from,
    recheckCloseIds: changedCloseIds(begun.state.report),
    facts: begun.facts,
  });

const CHAIN = /^SELECT t\.term AS coin, g\.pairs/;
const NEWEST = /^SELECT r\.\*, EXISTS \(SELECT 1 FROM wallet_readings/;
const CLOSES = /^SELECT p\.id::text, p\.account_name AS account/;

describe("the incremental verify's start", () => {
  it("with nothing written since the last verify, answers the chain, the readings and the closes: nothing more is sent", async () => {
    await verifyIncrementally(b.t.db, { account: b.account, coinNames, lookbackMs: LOOKBACK, now: NOW });
    const begun = await beginIncrementalVerify(b.t.db, b.account);
    const answered = await statementsOf(() => verifyAfter(begun, begun.db));
    expect(answered.sent).toEqual([]);
    const asked = await statementsOf(() => verifyAfter(begun, b.t.db));
    expect(asked.sent.filter((s) => CHAIN.test(s) || NEWEST.test(s) || CLOSES.test(s))).toHaveLength(3);
    expect(answered.result).toEqual(asked.result);
    expect(answered.result.report.ok).toBe(true);
  });

  it("reads the chain from the database when a bill was written in its range, and the rest after it", async () => {
    const truth = b.sandbox.truth();
    await storeQuietBill(b, truth.at(-1)!);
    const begun = await beginIncrementalVerify(b.t.db, b.account);
    const answered = await statementsOf(() => verifyAfter(begun, begun.db));
    // The chain first; once a read went to the database, so do the others (nothing is answered after it).
    expect(answered.sent.filter((s) => CHAIN.test(s) || NEWEST.test(s) || CLOSES.test(s))).toHaveLength(3);
    expect(CHAIN.test(answered.sent[0]!)).toBe(true);
    const asked = await verifyAfter(begun, b.t.db);
    expect(answered.result).toEqual(asked);
    expect(answered.result.continuity.length).toBeGreaterThan(0);
  });

  it("reads the closes from the database when one overlaps the range, with collateral checked too", async () => {
    await b.t.db.$executeRawUnsafe(
      "UPDATE verify_state SET check_from_ms = $2::bigint WHERE account_name = $1",
      b.account,
      String(JULY.fromMs + 86_400_000),
    );
    await snapshotAt(b, Date.UTC(2026, 8, 10));
    const begun = await beginIncrementalVerify(b.t.db, b.account);
    const options = {
      account: b.account,
      fromMs: Number(begun.state.check_from_ms),
      coinNames: COIN_NAMES,
      lookbackMs: LOOKBACK,
      now: NOW,
      rules: begun.state.rules,
      facts: begun.facts,
    };
    const answered = await statementsOf(() => verifyAccount(begun.db, options));
    expect(answered.sent.filter((s) => CLOSES.test(s))).toHaveLength(1);
    const asked = await verifyAccount(b.t.db, options);
    expect(answered.result).toEqual(asked);
    expect(answered.result.report.checks.some((c) => c.check === "closed-period" && c.subject === JULY.label)).toBe(
      true,
    );
  });

  it("answers the newest readings as the database gives them, and nothing once anything else went through", async () => {
    const cursorMs = (await beginIncrementalVerify(b.t.db, b.account)).facts.cursor!.cursorMs;
    const reading = (coin: string, observedAtMs: number, amount: string): WalletReading => ({
      account: b.account,
      coin,
      source: "collateral",
      observedAtMs,
      figures: [{ label: "collateral record 1", amount }],
    });
    // Two of one coin (the newest counts), one of another, one newer than the bills stored.
    await recordReadings(b.t.db, [
      reading("USDT", cursorMs - 3_600_000, "1.5"),
      reading("USDT", cursorMs - 60_000, "2.25"),
      reading("USDC", cursorMs - 120_000, "7"),
      reading("USDC", cursorMs + 60_000, "8"),
    ]);
    const begun = await beginIncrementalVerify(b.t.db, b.account);
    const answered = await statementsOf(() => newestReadings(begun.db, b.account, cursorMs - 5_000));
    expect(answered.sent).toEqual([]);
    const asked = await newestReadings(b.t.db, b.account, cursorMs - 5_000);
    expect(answered.result).toEqual(asked);
    expect(asked.readings.map((r) => [r.coin, r.figures[0]!.amount])).toEqual([
      ["USDC", "7"],
      ["USDT", "2.25"],
    ]);

    // Asked otherwise (another bound): read from the database; and then nothing is answered any more.
    const again = await beginIncrementalVerify(b.t.db, b.account);
    const other = await statementsOf(() => newestReadings(again.db, b.account, cursorMs));
    expect(other.sent.filter((s) => NEWEST.test(s))).toHaveLength(1);
    const after = await statementsOf(() => newestReadings(again.db, b.account, cursorMs - 5_000));
    expect(after.sent.filter((s) => NEWEST.test(s))).toHaveLength(1);

    // A write through it (a transaction, as the wallet files its results) drops the answers too.
    const third = await beginIncrementalVerify(b.t.db, b.account);
    await third.db.$transaction([third.db.$executeRawUnsafe("SELECT 1"), third.db.$executeRawUnsafe("SELECT 2")]);
    const dropped = await statementsOf(() => newestReadings(third.db, b.account, cursorMs - 5_000));
    expect(dropped.sent.filter((s) => NEWEST.test(s))).toHaveLength(1);
  });
});
