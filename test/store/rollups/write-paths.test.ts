// daily_rollups through every path that writes bills, on real PostgreSQL with the sandbox exchange
// over HTTP: a backfill by the bills stream, late bills stored by a re-read, revisions (a stored bill
// that differs from the exchange's, re-read: its old version moves out of its row, the new one in),
// damage done past the audit trail and undone by verify --repair's re-fetch. After each, the
// rollups equal a GROUP BY over bills and the BI views equal their old definitions.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExchangeClient } from "../../../src/exchange/http-client.ts";
import { startSandbox, type Sandbox, type SandboxBill } from "../../../src/sandbox/index.ts";
import { repairBreaks } from "../../../src/verify/repair.ts";
import { verifyAccount } from "../../../src/verify/verify-account.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { sandboxClient } from "../../support/sandbox-client.ts";
import { asRows, storedBills, syncFromSandbox } from "../../support/sandbox-sync.ts";
import { tamper } from "../../support/tamper.ts";
import { createOldViews, expectBooksAgree, expectRollupsMatchBills } from "./checks.ts";

const ACCOUNT = "rollups";
const DAY = 86_400_000;
const silent = pino({ level: "silent" });

let t: MigratedDb;
let sandbox: Sandbox;
let client: ExchangeClient;
let truth: SandboxBill[];
/** Bills the exchange files late: not served at the first sync. */
let late: SandboxBill[];

beforeAll(async () => {
  t = await createMigratedDb();
  await createOldViews(t.db);
  const startMs = Date.UTC(2026, 5, 1);
  sandbox = await startSandbox({
    seed: 19,
    billCount: 3000,
    startMs,
    endMs: startMs + 10 * DAY,
    limits: null,
    accountEvolution: "manual",
  });
  client = sandboxClient(sandbox);
  truth = sandbox.truth();
  late = [500, 1200, 2100, 2800].map((i) => truth.slice(i).find((b) => b.amount !== "0")!);
  for (const b of late) sandbox.hideBill(b.billId);
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  await t.close();
});

/** Re-reads the windows around these bills' times as verify --repair does (moves no bookmark). */
const reread = (bills: SandboxBill[]) =>
  repairBreaks({
    db: t.db,
    client,
    logger: silent,
    account: ACCOUNT,
    continuity: [],
    windows: bills.map((b) => ({ fromMs: b.cTimeMs - 1, toMs: b.cTimeMs + 1 })),
  });
const pick = (i: number) => truth.slice(i).find((b) => b.amount !== "0" && !late.includes(b))!;
const revisionCount = async () =>
  (
    await t.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM bill_revisions WHERE account_name = $1",
      ACCOUNT,
    )
  )[0]!.n;

describe("daily_rollups follows every write of bills", () => {
  it("a backfill through the bills stream", async () => {
    const summary = await syncFromSandbox(t.db, sandbox, ACCOUNT);
    expect(summary.inserted).toBe(truth.length - late.length);
    await expectBooksAgree(t.db);
    const days = await t.db.$queryRawUnsafe<{ n: number }[]>("SELECT count(DISTINCT day)::int AS n FROM daily_rollups");
    expect(days[0]!.n).toBeGreaterThanOrEqual(10);
  });

  it("late bills, stored when a re-read finds them", async () => {
    for (const b of late) sandbox.revealBill(b.billId);
    const r = await reread(late);
    expect(r.restored).toBe(late.length);
    expect(await storedBills(t.db, ACCOUNT)).toEqual(asRows(truth));
    await expectBooksAgree(t.db);
  });

  it("revisions: the old version moves out of its row and the new one in, scale included", async () => {
    const [rescaled, moved, altered] = [pick(700), pick(1500), pick(2400)];
    // The stored copies differ from the exchange's: trailing zeros, another day/type/symbol, another amount.
    await tamper(
      t.db,
      "UPDATE bills SET amount = round(amount, scale(amount) + 4), fill_fee = round(fill_fee, scale(fill_fee) + 3) WHERE account_name = $1 AND bill_id = $2",
      ACCOUNT,
      rescaled.billId,
    );
    await tamper(
      t.db,
      `UPDATE bills SET created_at_ms = created_at_ms + 2 * ${DAY}, created_at = created_at + interval '2 days',
              business_type = 'position_funding', symbol = 'cmt_moved' WHERE account_name = $1 AND bill_id = $2`,
      ACCOUNT,
      moved.billId,
    );
    await tamper(
      t.db,
      "UPDATE bills SET amount = amount - 5 WHERE account_name = $1 AND bill_id = $2",
      ACCOUNT,
      altered.billId,
    );
    // The rollups follow even with the audit trail's guard off.
    await expectRollupsMatchBills(t.db);

    const before = await revisionCount();
    const r = await reread([rescaled, moved, altered]);
    expect(r.revised).toBe(3);
    expect(await revisionCount()).toBe(before + 3);
    expect(await storedBills(t.db, ACCOUNT)).toEqual(asRows(truth));
    await expectBooksAgree(t.db);
    const empty = await t.db.$queryRawUnsafe<unknown[]>("SELECT 1 FROM daily_rollups WHERE symbol = 'cmt_moved'");
    expect(empty).toEqual([]);
  });

  it("verify --repair: a deleted bill comes back and an altered one is corrected", async () => {
    const [deleted, altered] = [pick(900), pick(1900)];
    await tamper(t.db, "DELETE FROM bills WHERE account_name = $1 AND bill_id = $2", ACCOUNT, deleted.billId);
    await tamper(
      t.db,
      "UPDATE bills SET amount = amount + 7.125 WHERE account_name = $1 AND bill_id = $2",
      ACCOUNT,
      altered.billId,
    );
    await expectRollupsMatchBills(t.db);

    const { continuity } = await verifyAccount(t.db, { account: ACCOUNT, coinNames: {}, lookbackMs: 600_000 });
    expect(continuity.flatMap((c) => c.breaks).length).toBeGreaterThanOrEqual(2);
    const r = await repairBreaks({ db: t.db, client, logger: silent, account: ACCOUNT, continuity });
    expect(r).toMatchObject({ restored: 1, revised: 1 });
    expect(await storedBills(t.db, ACCOUNT)).toEqual(asRows(truth));
    await expectBooksAgree(t.db);
  });
});
