// The bills stream against the real sandbox exchange over HTTP and a real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type Ordering } from "../../../src/sandbox/index.ts";
import { syncAccountBills, UnsplittableMillisecondError } from "../../../src/streams/bills/index.ts";
import { pino } from "pino";
import { sandboxClient } from "../../support/sandbox-client.ts";
import { readCursor } from "../../../src/store/cursors.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";
import { asRows, storedBills, syncFromSandbox } from "../../support/sandbox-sync.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

const matrix: { ordering: Ordering; startInclusive: boolean; endInclusive: boolean; bursts: number }[] = [];
for (const ordering of ["asc", "desc", "newest-shuffled"] as const)
  for (const startInclusive of [true, false])
    for (const endInclusive of [true, false])
      for (const bursts of [0, 2]) matrix.push({ ordering, startInclusive, endInclusive, bursts });

describe("bills sync against the sandbox exchange", () => {
  it.each(matrix)("backfills exactly the sandbox's truth, and a rerun writes nothing: %j", async (behaviour) => {
    const sandbox = await startSandbox({ seed: 11, billCount: 2500, limits: null, ...behaviour });
    const account = `m_${behaviour.ordering}_${+behaviour.startInclusive}${+behaviour.endInclusive}_${behaviour.bursts}`;
    try {
      const first = await syncFromSandbox(t.db, sandbox, account);
      const truth = sandbox.truth();
      expect(await storedBills(t.db, account)).toEqual(asRows(truth));
      expect(first.inserted).toBe(truth.length);
      expect(first.quarantined).toBe(0);
      if (behaviour.bursts) expect(first.splitMilliseconds).toBeGreaterThanOrEqual(behaviour.bursts);

      const second = await syncFromSandbox(t.db, sandbox, account, { fromMs: truth[0]!.cTimeMs });
      expect(second).toMatchObject({ inserted: 0, revised: 0, quarantined: 0 });
      expect(await storedBills(t.db, account)).toEqual(asRows(truth));
    } finally {
      await sandbox.close();
    }
  });

  it("starts each backfill window at the density of the span before it, not at an hour", async () => {
    // Two days of ~110 bills each: day 2's window starts ~17 h wide (the density of day 1), so it
    // takes about 2 requests; from the default hour it regrew 1, 2, 4, 8 h... (5 or more).
    const DAY = 86_400_000;
    const start = Date.UTC(2026, 0, 1);
    const sandbox = await startSandbox({
      seed: 21,
      billCount: 220,
      startMs: start,
      endMs: start + 2 * DAY - 1,
      limits: null,
    });
    const client = sandboxClient(sandbox);
    try {
      const window = (from: number) =>
        syncAccountBills({
          db: t.db,
          client,
          logger: pino({ level: "silent" }),
          accountName: "density",
          backfillFromMs: from,
          lookbackMs: 0,
          fromMs: from,
          untilMs: from + DAY - 1,
          bookmark: { window: `bills-backfill:${from}-${from + DAY - 1}` },
        });
      const first = await window(start);
      const second = await window(start + DAY);
      // Day 1's padded last query may bring bills of day 2's first millisecond: stored then.
      expect(first.inserted + second.inserted).toBe(sandbox.truth().length);
      expect(second.requests).toBeLessThanOrEqual(3);
      expect(await storedBills(t.db, "density")).toEqual(asRows(sandbox.truth()));
    } finally {
      await client.close();
      await sandbox.close();
    }
  });

  it("catches bills that appear late with an older timestamp, within the lookback", async () => {
    const sandbox = await startSandbox({ seed: 12, billCount: 800, limits: null });
    try {
      await syncFromSandbox(t.db, sandbox, "late");
      const late = sandbox.appendBill({
        cTimeMs: Date.now() - 120_000,
        businessType: "deposit",
        coin: "USDT",
        symbol: "",
        amount: "12.5",
        fillFee: "0",
      });
      const r = await syncFromSandbox(t.db, sandbox, "late", { lookbackMs: 600_000 });
      expect(r.inserted).toBe(1);
      const stored = await storedBills(t.db, "late");
      expect(stored).toEqual(asRows(sandbox.truth()));
      expect(stored.some((b) => b.billId === late.billId)).toBe(true);
    } finally {
      await sandbox.close();
    }
  });

  it("ends exact under 5% injected faults (429, 5xx HTML, stalls, truncated JSON, wrong type, resets)", async () => {
    const sandbox = await startSandbox({
      seed: 13,
      billCount: 3000,
      limits: null,
      bursts: 1,
      faults: { rate: 0.05 },
      stallMs: 600,
    });
    try {
      const r = await syncFromSandbox(t.db, sandbox, "faults", { timeoutMs: 400 });
      expect(await storedBills(t.db, "faults")).toEqual(asRows(sandbox.truth()));
      expect(r.quarantined).toBe(0);
      expect(sandbox.stats().faultsInjected).toBeGreaterThan(0);
    } finally {
      await sandbox.close();
    }
  });

  it("stays inside the weight budget: no 429 from the exchange, never more weight in a window than allowed", async () => {
    const limits = { ipWeight: 40, uidWeight: 100, windowMs: 1000 };
    const sandbox = await startSandbox({ seed: 14, billCount: 2000, limits });
    try {
      await syncFromSandbox(t.db, sandbox, "budget", { budget: { ip: 40, uid: 100, windowMs: 1000 } });
      expect(await storedBills(t.db, "budget")).toEqual(asRows(sandbox.truth()));
      const stats = sandbox.stats();
      expect(stats.rateLimited).toBe(0);
      expect(stats.maxUidWeightInWindow).toBeLessThanOrEqual(100);
      expect(stats.maxIpWeightInWindow).toBeLessThanOrEqual(40);
    } finally {
      await sandbox.close();
    }
  });

  it("fails loudly naming a millisecond no filter can split, keeping everything before it", async () => {
    const sandbox = await startSandbox({ seed: 15, billCount: 1500, limits: null, unsplittableBurst: true });
    try {
      const err = await syncFromSandbox(t.db, sandbox, "unsplittable").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnsplittableMillisecondError);
      const ms = (err as UnsplittableMillisecondError).ms;
      const counts = new Map<number, number>();
      for (const b of sandbox.truth()) counts.set(b.cTimeMs, (counts.get(b.cTimeMs) ?? 0) + 1);
      expect(counts.get(ms)).toBeGreaterThan(100);
      const cursor = await readCursor(t.db, "unsplittable", "bills");
      expect(cursor).toBeLessThan(ms);
      // Every bill up to the cursor is stored; past it, only bills a committed window's page held
      // (a padded query's neighbours), exactly as served.
      const stored = await storedBills(t.db, "unsplittable");
      const truth = asRows(sandbox.truth());
      expect(stored.filter((b) => Number(b.cTimeMs) <= cursor!)).toEqual(
        truth.filter((b) => Number(b.cTimeMs) <= cursor!),
      );
      const served = new Map(truth.map((b) => [b.billId, b]));
      for (const b of stored) expect(b).toEqual(served.get(b.billId));
    } finally {
      await sandbox.close();
    }
  });
});
