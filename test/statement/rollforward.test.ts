// The period roll-forward (opening + movements = closing = the reported collateral nearest the end)
// on real PostgreSQL, with bills synced from the sandbox exchange and collateral snapshots taken
// through the snapshots stream at instants around the month ends: tied months (snapshot minutes
// after the end, and minutes before it), an unreconcilable month (no snapshot near enough; a coin
// COIN_NAMES does not pair; a continuity break inside), and a month untied by a bill removed from
// the store, whose difference is exactly that bill's.
import { Decimal } from "decimal.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxBill } from "../../src/sandbox/index.ts";
import { formatStatementText } from "../../src/statement/format-text.ts";
import { buildStatement, type CoinStatement, type Statement } from "../../src/statement/statement.ts";
import { AUGUST, COIN_NAMES, JULY, snapshotAt, syncedBooks, type Books } from "../periods/fixture.ts";
import { tamper } from "../support/tamper.ts";

const JUNE = { label: "2026-06", fromMs: Date.UTC(2026, 5, 1), toMs: Date.UTC(2026, 6, 1) };
const MINUTE = 60_000;
let b: Books;
const julySnapshotMs = JULY.toMs + 3 * MINUTE;

beforeAll(async () => {
  // Seed 41's history has USDT funding bills at 00:00 on August 1st: between July's end and its snapshot.
  b = await syncedBooks({ seed: 41 });
  await snapshotAt(b, julySnapshotMs);
  await snapshotAt(b, AUGUST.toMs - 3 * MINUTE);
});
afterAll(async () => {
  await b.close();
});

const statementOf = (period: typeof JULY, o: { coinNames?: Record<string, string>; maxGapMs?: number } = {}) =>
  buildStatement(b.t.db, { account: b.account, period, coinNames: o.coinNames ?? COIN_NAMES, maxGapMs: o.maxGapMs });
const coin = (s: Statement, name: string) => s.coins.find((c) => c.coin === name)!;
const truthOf = (name: string) => b.sandbox.truth().filter((x) => x.coin === name);
/** The true balance of a coin after its last bill at or before atMs. */
const balanceAt = (name: string, atMs: number) =>
  truthOf(name)
    .filter((x) => x.cTimeMs <= atMs)
    .at(-1)!.balance;

describe("the roll-forward ties", () => {
  it("July, with the snapshot 3 minutes after its end: the bills in between roll the closing balance on", async () => {
    const s = await statementOf(JULY);
    expect(s.coins.map((c) => c.coin).sort()).toEqual(["USDC", "USDT"]);
    expect(s.rollForward).toEqual({ status: "tied", maxGapMs: 3_600_000 });
    const atMs = julySnapshotMs;
    for (const c of s.coins) {
      const r = c.rollForward;
      expect(r.status, c.coin).toBe("tied");
      expect(r.chain).toMatchObject({ mark: "tied", reason: null });
      expect(r.reported).toMatchObject({
        mark: "tied",
        observedAt: new Date(atMs).toISOString(),
        gapMs: atMs - JULY.toMs,
        matched: "main record",
        reason: null,
      });
      const between = truthOf(c.coin).filter((x) => x.cTimeMs >= JULY.toMs && x.cTimeMs <= atMs);
      expect(r.reported.bridge).toMatchObject({ side: "after", bills: between.length });
      if (c.coin === "USDT") expect(between.length).toBeGreaterThan(0);
      expect(new Decimal(r.reported.ledgerAtSnapshot!).eq(balanceAt(c.coin, atMs)), c.coin).toBe(true);
      expect(new Decimal(r.reported.reported!).eq(balanceAt(c.coin, atMs)), c.coin).toBe(true);
      expect(new Decimal(r.reported.difference!).isZero()).toBe(true);
    }
  });

  it("August, with the snapshot 3 minutes before its end: the bills after it are taken off", async () => {
    const s = await statementOf(AUGUST);
    expect(s.rollForward.status).toBe("tied");
    const atMs = AUGUST.toMs - 3 * MINUTE;
    for (const c of s.coins) {
      const between = truthOf(c.coin).filter((x) => x.cTimeMs > atMs && x.cTimeMs < AUGUST.toMs);
      expect(c.rollForward.reported).toMatchObject({
        mark: "tied",
        gapMs: -3 * MINUTE,
        bridge: { side: "before", bills: between.length },
      });
      expect(new Decimal(c.rollForward.reported.ledgerAtSnapshot!).eq(balanceAt(c.coin, atMs))).toBe(true);
    }
  });

  it("June, whose nearest snapshot is a month away, only with a --max-gap that reaches it", async () => {
    const june = await statementOf(JUNE);
    expect(june.rollForward.status).toBe("unreconcilable");
    const usdt = coin(june, "USDT").rollForward;
    expect(usdt.chain.mark).toBe("tied");
    expect(usdt.reported).toMatchObject({ mark: "unreconcilable", ledgerAtSnapshot: null, difference: null });
    expect(usdt.reported.reason).toBe(
      `the collateral snapshot nearest the period end (coin id 2, at ${new Date(julySnapshotMs).toISOString()}) ` +
        "is 31d 3m after it, farther than --max-gap (1h)",
    );
    const wide = await statementOf(JUNE, { maxGapMs: 40 * 86_400_000 });
    expect(wide.rollForward.status).toBe("tied");
    const bridged = coin(wide, "USDT").rollForward.reported;
    expect(bridged.bridge!.bills).toBe(
      truthOf("USDT").filter((x) => x.cTimeMs >= JUNE.toMs && x.cTimeMs <= julySnapshotMs).length,
    );
  });
});

describe("the roll-forward does not tie", () => {
  it("a coin COIN_NAMES does not pair is unreconcilable, and so is the account", async () => {
    const s = await statementOf(JULY, { coinNames: { "2": "USDT" } });
    expect(coin(s, "USDT").rollForward.status).toBe("tied");
    expect(coin(s, "USDC").rollForward.reported).toMatchObject({
      mark: "unreconcilable",
      reason: "COIN_NAMES pairs no coin id with USDC: no reported figure can be paired with it",
    });
    expect(s.rollForward.status).toBe("unreconcilable");
    const none = await statementOf(JULY, { coinNames: {} });
    expect(none.coins.every((c) => c.rollForward.status === "unreconcilable")).toBe(true);
  });

  it("a bill missing at the end of July (removed from the store): not tied, by exactly that bill", async () => {
    const { removed, before } = await removeLastBillOf("USDT", JULY);
    const s = await statementOf(JULY);
    const usdt = coin(s, "USDT").rollForward;
    // The chain still ties (the bills left chain among themselves); the exchange's figure does not.
    expect(usdt.chain.mark).toBe("tied");
    expect(usdt.reported.mark).toBe("not tied");
    expect(usdt.status).toBe("not tied");
    expect(new Decimal(usdt.reported.difference!).eq(new Decimal(removed.balance).minus(before.balance))).toBe(true);
    expect(usdt.reported.reason).toContain(`differs from the ledger's ${usdt.reported.ledgerAtSnapshot} by`);
    // The bills after the end chain from the removed one, not from the closing balance: said too.
    expect(usdt.reported.reason).toContain(
      "do not chain to the closing balance " +
        `(the last bill at or before the snapshot carries ${balanceAt("USDT", julySnapshotMs)})`,
    );
    expect(coin(s, "USDC").rollForward.status).toBe("tied");
    expect(s.rollForward.status).toBe("not tied");
    const r = usdt.reported;
    expect(formatStatementText(s)).toContain(
      `    closing = reported: NOT TIED: closing ${r.closing} + (${r.bridge!.change}) ` +
        `for ${r.bridge!.bills} bill(s) from the end to the snapshot = ${r.ledgerAtSnapshot}; ` +
        `reported ${r.reported}, snapshot of coin id 2 at ${r.observedAt} (3m after the end); ` +
        `difference ${r.difference}: the reported`,
    );
    expect(formatStatementText(s)).toMatch(/\nroll-forward: NOT TIED: USDT not tied \(--max-gap 1h\)\n$/);
  });

  it("a continuity break inside August: unreconcilable, with the reason", async () => {
    const august = truthOf("USDT").filter((x) => x.cTimeMs >= AUGUST.fromMs && x.cTimeMs < AUGUST.toMs);
    const altered = august[Math.floor(august.length / 2)]!;
    await tamper(
      b.t.db,
      "UPDATE bills SET balance = balance + 1 WHERE account_name = $1 AND bill_id = $2",
      b.account,
      altered.billId,
    );
    const s = await statementOf(AUGUST);
    const usdt: CoinStatement = coin(s, "USDT");
    expect(usdt.rollForward.chain).toMatchObject({
      mark: "unreconcilable",
      // Two around the altered bill, and August's first, which follows July's removed last bill.
      reason: "3 continuity break(s) inside the period: a bill is missing or altered (ledger-sync verify names them)",
    });
    expect(usdt.rollForward.status).toBe("unreconcilable");
    expect(s.rollForward.status).toBe("unreconcilable");
  });
});

/** Deletes a coin's last bill of the period the way only a superuser could; returns it and the one before. */
async function removeLastBillOf(
  name: string,
  period: typeof JULY,
): Promise<{ removed: SandboxBill; before: SandboxBill }> {
  const inPeriod = truthOf(name).filter((x) => x.cTimeMs >= period.fromMs && x.cTimeMs < period.toMs);
  const [before, removed] = inPeriod.slice(-2) as [SandboxBill, SandboxBill];
  const n = await tamper(
    b.t.db,
    "DELETE FROM bills WHERE account_name = $1 AND bill_id = $2",
    b.account,
    removed.billId,
  );
  expect(n).toBe(1);
  return { removed, before };
}
