// Snapshot retention never prunes a close's evidence (src/store/snapshot-retention.ts): on real
// PostgreSQL, books synced from the sandbox, August closed (tied) against a collateral snapshot, then
// closed again (a quiet bill filed) against a nearer one, so the first close is superseded. Later
// snapshots make both compared snapshots old versions with newer ones before the cutoff: without the
// rule both would go. After pruning, every row either close compared is still there (each close's
// reported figures come back from the rows as they are now), verify passes, the statement of August
// gives the current close's roll-forward again, and a snapshot no close used is pruned as before. A
// close made before the roll-forward existed (its figures only) is honoured too.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closePeriod } from "../../src/periods/close-period.ts";
import { collateralNear } from "../../src/statement/collateral-near.ts";
import type { RollForward } from "../../src/statement/rollforward.ts";
import { buildStatement } from "../../src/statement/statement.ts";
import { pruneSnapshotHistory } from "../../src/store/snapshot-retention.ts";
import { verifyAccount } from "../../src/verify/verify-account.ts";
import {
  AUGUST,
  COIN_NAMES,
  lastOfItsMillisecond,
  snapshotAt,
  storeQuietBill,
  syncedBooks,
  type Books,
} from "../periods/fixture.ts";

const MINUTE = 60_000;
const DAY = 86_400_000;
const MAX_GAP_MS = 40 * DAY;
const SEPTEMBER = { fromMs: Date.UTC(2026, 8, 1), toMs: Date.UTC(2026, 9, 1) };
const iso = (ms: number) => new Date(ms).toISOString();

let b: Books;
/** Snapshot instants: S0 no close compares, S1 the first close's, S2 the second's, S3 and S4 later. */
let S0: number, S1: number, S2: number, S3: number, S4: number;

interface CloseRow {
  id: string;
  supersedes: string | null;
  rollforward: { coins: Record<string, RollForward> };
}

const closes = () =>
  b.t.db.$queryRawUnsafe<CloseRow[]>(
    "SELECT id::text, supersedes::text, rollforward FROM period_closes WHERE account_name = $1 ORDER BY id",
    b.account,
  );

/** Collateral rows of a coin id observed at an instant. */
const rowsAt = async (coinId: string, ms: number) =>
  (
    await b.t.db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM collateral_history
       WHERE account_name = $1 AND coin_id = $2 AND observed_at = $3::timestamptz`,
      b.account,
      coinId,
      iso(ms),
    )
  )[0]!.n;

/**
 * Rows observed at the instant that the old rule alone would prune at `cutoffMs`: older than it, with
 * a newer version of the same record before it.
 */
const prunableAt = async (coinId: string, ms: number, cutoffMs: number) =>
  (
    await b.t.db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM collateral_history h
       WHERE h.account_name = $1 AND h.coin_id = $2 AND h.observed_at = $3::timestamptz
         AND h.observed_at < $4::timestamptz AND EXISTS (
           SELECT 1 FROM collateral_history n
           WHERE n.account_name = h.account_name AND n.coin_id = h.coin_id AND n.margin_mode = h.margin_mode
             AND n.cross_contract_id = h.cross_contract_id AND n.cross_symbol = h.cross_symbol
             AND n.isolated_position_id = h.isolated_position_id
             AND n.observed_at > h.observed_at AND n.observed_at < $4::timestamptz)`,
      b.account,
      coinId,
      iso(ms),
      iso(cutoffMs),
    )
  )[0]!.n;

/** Each close's reported figure per coin, as the rows give it now (collateral-near.ts, as the close did). */
async function reportedNow(c: CloseRow) {
  const out: Record<string, unknown> = {};
  for (const [coin, rf] of Object.entries(c.rollforward.coins)) {
    const r = rf.reported;
    const near = await collateralNear(b.t.db, b.account, coin, r.coinId!, Date.parse(r.observedAt!));
    out[coin] = near && {
      observedAt: near.observedAt,
      reportedAll: near.amount,
      records: near.records,
      lastBillBalance: near.ledgerBalance,
    };
  }
  return out;
}

function reportedKept(c: CloseRow) {
  return Object.fromEntries(
    Object.entries(c.rollforward.coins).map(([coin, rf]) => [
      coin,
      {
        observedAt: rf.reported.observedAt,
        reportedAll: rf.reported.reportedAll,
        records: rf.reported.records,
        lastBillBalance: rf.reported.lastBillBalance,
      },
    ]),
  );
}

const close = (by: string) =>
  closePeriod(b.t.db, {
    account: b.account,
    period: AUGUST,
    coinNames: COIN_NAMES,
    lookbackMs: 600_000,
    closedBy: by,
    maxGapMs: MAX_GAP_MS,
  });

beforeAll(async () => {
  b = await syncedBooks({ seed: 71 });
  const truth = b.sandbox.truth();
  const lastIn = (coin: string) =>
    Math.max(...truth.filter((x) => x.coin === coin && x.cTimeMs < AUGUST.toMs).map((x) => x.cTimeMs));
  // S1 just before each coin's last August bill, S2 after the end: both coins change between them.
  S0 = AUGUST.fromMs + 10 * DAY;
  S1 = Math.min(lastIn("USDT"), lastIn("USDC")) - 1;
  S2 = AUGUST.toMs + MINUTE;
  S3 = AUGUST.toMs + 14 * DAY;
  S4 = AUGUST.toMs + 18 * DAY;
  await snapshotAt(b, S0);
  await snapshotAt(b, S1);
  expect((await close("first")).status).toBe("closed");
  await storeQuietBill(b, lastOfItsMillisecond(truth, AUGUST));
  await snapshotAt(b, S2);
  expect((await close("second")).status).toBe("closed");
  await snapshotAt(b, S3);
}, 180_000);
afterAll(async () => {
  await b?.close();
});

describe("snapshot retention and the closes' evidence", () => {
  it("keeps every row a tied close compared, superseded closes too, and prunes a row no close used", async () => {
    const [first, second] = await closes();
    expect(second!.supersedes).toBe(first!.id);
    // The closes compared S1 and S2, each tied, for both coins.
    for (const [c, at] of [
      [first!, S1],
      [second!, S2],
    ] as const)
      for (const [coin, id] of [
        ["USDT", "2"],
        ["USDC", "1"],
      ] as const)
        expect(c.rollforward.coins[coin]!.reported, `${coin} of close ${c.id}`).toMatchObject({
          mark: "tied",
          coinId: id,
          observedAt: iso(at),
        });
    const before = [await reportedNow(first!), await reportedNow(second!)];
    expect(before).toEqual([reportedKept(first!), reportedKept(second!)]);

    const now = S3 + 2 * DAY;
    const cutoff = now - DAY;
    // Without the rule, S0, S1 and S2 would all go: each is older than the cutoff and has a newer version.
    for (const id of ["2", "1"])
      for (const at of [S0, S1, S2])
        expect(await prunableAt(id, at, cutoff), `coin ${id} at ${iso(at)}`).toBeGreaterThan(0);
    const s0 = await rowsAt("2", S0);
    const kept = {
      s1: [await rowsAt("2", S1), await rowsAt("1", S1)],
      s2: [await rowsAt("2", S2), await rowsAt("1", S2)],
    };

    const removed = await pruneSnapshotHistory(b.t.db, b.account, 1, new Date(now));
    expect(removed).toBeGreaterThanOrEqual(s0);
    expect(await rowsAt("2", S0)).toBe(0);
    expect({
      s1: [await rowsAt("2", S1), await rowsAt("1", S1)],
      s2: [await rowsAt("2", S2), await rowsAt("1", S2)],
    }).toEqual(kept);
    expect([await reportedNow(first!), await reportedNow(second!)]).toEqual(before);
  });

  it("leaves the closed period verified, and its statement gives the close's roll-forward again", async () => {
    const { report } = await verifyAccount(b.t.db, { account: b.account, coinNames: COIN_NAMES, lookbackMs: 600_000 });
    expect(report.checks.filter((c) => c.status === "fail")).toEqual([]);
    expect(report.checks.find((c) => c.check === "closed-period")?.status).toBe("pass");
    const statement = await buildStatement(b.t.db, {
      account: b.account,
      period: AUGUST,
      coinNames: COIN_NAMES,
      maxGapMs: MAX_GAP_MS,
    });
    const [, current] = await closes();
    expect(Object.fromEntries(statement.coins.map((c) => [c.coin, c.rollForward]))).toEqual(current!.rollforward.coins);
  });

  it("honours a close made before the roll-forward existed, by the collateral its figures name", async () => {
    await snapshotAt(b, S4);
    const now = S4 + 2 * DAY;
    const cutoff = now - DAY;
    for (const id of ["2", "1"]) expect(await prunableAt(id, S3, cutoff), `coin ${id}`).toBeGreaterThan(0);
    const atS3 = await rowsAt("2", S3);
    // As closes were stored then: no roll-forward, the statement's collateral comparisons in figures. It
    // names an instant an hour after S3, at which no row was observed: the record as of then is its S3
    // version (a coin's record unchanged at the snapshot's instant is compared at its older version).
    const figures = { coins: [{ coin: "USDT", collateral: [{ coinId: "2", observedAt: iso(S3 + 60 * MINUTE) }] }] };
    await b.t.db.$executeRawUnsafe(
      `INSERT INTO period_closes (account_name, period, period_start, period_end, period_start_ms, period_end_ms,
                                 bill_count, digest, figures, closed_by)
       VALUES ($1, '2026-09', $2::timestamptz, $3::timestamptz, $4::bigint, $5::bigint, 0, repeat('a', 64),
               $6::jsonb, 'legacy')`,
      b.account,
      iso(SEPTEMBER.fromMs),
      iso(SEPTEMBER.toMs),
      String(SEPTEMBER.fromMs),
      String(SEPTEMBER.toMs),
      JSON.stringify(figures),
    );
    await pruneSnapshotHistory(b.t.db, b.account, 1, new Date(now));
    expect(await rowsAt("2", S3)).toBe(atS3);
    // USDC's S3 versions are named by no close: pruned as before.
    expect(await prunableAt("1", S3, cutoff)).toBe(0);
  });
});
