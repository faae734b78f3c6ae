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
    const snapshotRuns = () => requests.filter((l) => l.includes("/capi/v2/account/account")).length;
    const billsRequests = () => requests.filter((l) => l.includes("/capi/v2/account/bills")).length;
    // Passes every ~0.3 s and snapshots at 0, ~1, ~2 s: three snapshot rounds take ~2 s on an idle
    // machine. Waited for rather than slept on, so a loaded machine only makes it slower; were
    // snapshots taken only once, the wait would run out.
    const deadline = Date.now() + 20_000;
    while ((snapshotRuns() < 3 || billsRequests() < 5) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await sync.finish();
    await sync.stop(); // the demo's clean-up stops it again: harmless
    expect(snapshotRuns()).toBeGreaterThanOrEqual(3);
    expect(billsRequests()).toBeGreaterThanOrEqual(5);
    const [{ n }] = (await t.db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM bills")) as [
      { n: number },
    ];
    expect(n).toBe(sandbox.truth().length);
  });
});
