// The wallet check's tables on real PostgreSQL: readings wait in order, the newest MAX_PENDING per
// coin are kept while the bills stay behind, and settling files the newest result per coin (the
// last tie kept) and takes the compared readings off the queue.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MAX_PENDING,
  pendingReadings,
  readWalletChecks,
  recordReadings,
  settleReadings,
  type WalletReading,
} from "../../src/store/wallet-checks.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

let t: MigratedDb;
beforeAll(async () => {
  t = await createMigratedDb();
});
afterAll(async () => {
  await t.close();
});

const reading = (account: string, coin: string, atMs: number, amount = "10.5"): WalletReading => ({
  account,
  coin,
  source: "collateral",
  observedAtMs: atMs,
  figures: [{ label: "collateral record cross/0/0", amount }],
});

describe("wallet_readings and wallet_checks", () => {
  it("keeps the newest MAX_PENDING readings per coin while they wait, other accounts untouched", async () => {
    await recordReadings(t.db, [reading("other", "USDT", 1)]);
    for (let i = 0; i < MAX_PENDING + 5; i++) await recordReadings(t.db, [reading("a", "USDT", 1000 + i)]);
    const pending = await pendingReadings(t.db, "a");
    expect(pending).toHaveLength(MAX_PENDING);
    expect(pending[0]!.observedAtMs).toBe(1005);
    expect(pending.at(-1)!.observedAtMs).toBe(1000 + MAX_PENDING + 4);
    expect(await pendingReadings(t.db, "other")).toHaveLength(1);
  });

  it("files the newest result per coin, keeps the last tie, and dequeues what was compared", async () => {
    await recordReadings(t.db, [reading("b", "USDC", 10), reading("b", "USDC", 20, "0.000000012345678901")]);
    const [first, second] = await pendingReadings(t.db, "b");
    await settleReadings(t.db, "b", [
      {
        reading: first!,
        status: "tied",
        reported: "10.5",
        calculated: "10.5",
        difference: "0",
        window: null,
        summary: "ok",
      },
      {
        reading: second!,
        status: "not_tied",
        reported: "0.000000012345678901",
        calculated: "0",
        difference: "0.000000012345678901",
        window: { fromMs: 10, toMs: 20 },
        summary: "differs",
      },
    ]);
    expect(await pendingReadings(t.db, "b")).toEqual([]);
    const [row] = await readWalletChecks(t.db, "b");
    expect(row).toMatchObject({
      status: "not_tied",
      difference: "0.000000012345678901",
      lastTiedAtMs: 10,
      window: { fromMs: 10, toMs: 20 },
    });
    expect(row!.reading.figures[0]!.amount).toBe("0.000000012345678901");
  });
});
