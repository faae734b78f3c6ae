// The demo's syncing without Redis: every BILLS_INTERVAL_MS a bills pass, and snapshots every
// SNAPSHOT_INTERVAL_MS, not only once (the snapshot time was pushed back by every bills pass).
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startInlineSync } from "../../../src/cli/demo/inline-sync.ts";
import { loadAccounts } from "../../../src/config/accounts.ts";
import { loadConfig } from "../../../src/config/index.ts";
import { sandboxExchangeEnv, startSandbox, type Sandbox } from "../../../src/sandbox/index.ts";
import { createMigratedDb, type MigratedDb } from "../../support/migrated-db.ts";

let t: MigratedDb;
let sandbox: Sandbox;
const requests: string[] = [];
beforeAll(async () => {
  t = await createMigratedDb();
  sandbox = await startSandbox({ seed: 41, billCount: 200, limits: null, log: (line) => requests.push(line) });
});
afterAll(async () => {
  await sandbox.close();
  await t.close();
});

describe("the demo's inline syncing", () => {
  it("runs a bills pass every bills interval and snapshots every snapshot interval, then a last pass on finish", async () => {
    const config = loadConfig({
      ...sandboxExchangeEnv(sandbox.url),
      DATABASE_URL: t.url,
      SYNC_COIN_IDS: "2",
      BACKFILL_FROM: String(sandbox.truth()[0]!.cTimeMs),
      BILLS_INTERVAL_MS: "300",
      SNAPSHOT_INTERVAL_MS: "1000",
    });
    const sync = startInlineSync({
      config,
      logger: pino({ level: "silent" }),
      db: t.db,
      account: loadAccounts(config)[0]!,
    });
    await new Promise((r) => setTimeout(r, 3500));
    await sync.finish();
    await sync.stop(); // the demo's clean-up stops it again: harmless
    const snapshotRuns = requests.filter((l) => l.includes("/capi/v2/account/account")).length;
    const billsRequests = requests.filter((l) => l.includes("/capi/v2/account/bills")).length;
    // ~3.5 s: passes every ~0.3 s, snapshots at 0, ~1, ~2, ~3 s.
    expect(snapshotRuns).toBeGreaterThanOrEqual(3);
    expect(billsRequests).toBeGreaterThanOrEqual(5);
    const [{ n }] = (await t.db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM bills")) as [
      { n: number },
    ];
    expect(n).toBe(sandbox.truth().length);
  });
});
