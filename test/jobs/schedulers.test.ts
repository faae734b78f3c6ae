// @module-tag redis
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AccountConfig } from "../../src/config/accounts.ts";
import { closeQueues, createQueues, type Queues } from "../../src/jobs/queues.ts";
import { reconcileSchedulers, RESWEEP_PRIORITY } from "../../src/jobs/schedulers.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let r: TestRedis;
let queues: Queues;
beforeAll(async () => {
  r = await createTestRedis();
  queues = createQueues(r.client, r.prefix);
});
afterAll(async () => {
  await closeQueues(queues);
  await r.cleanup();
});

const account = (name: string, coinIds: string[] = []): AccountConfig => ({
  name,
  coinIds,
  backfillFromMs: 0,
  credentials: { apiKey: "k", apiSecret: "s", passphrase: "p" },
  billsSource: "v2",
});
const schedulers = async () => ({
  bills: (await queues.bills.getJobSchedulers(0, -1)).map((s) => [s.key, Number(s.every)]).sort(),
  snapshots: (await queues.snapshots.getJobSchedulers(0, -1)).map((s) => [s.key, Number(s.every)]).sort(),
});

describe("job scheduler reconciliation", () => {
  it("adds one bills scheduler per account and snapshots for accounts with coins", async () => {
    const r1 = await reconcileSchedulers(queues, [account("a", ["2"]), account("b")], {
      billsMs: 60_000,
      snapshotsMs: 300_000,
    });
    expect(r1).toEqual({ added: ["bills:a", "bills:b", "snapshots:a"], updated: [], removed: [] });
    expect(await schedulers()).toEqual({
      bills: [
        ["bills:a", 60_000],
        ["bills:b", 60_000],
      ],
      snapshots: [["snapshots:a", 300_000]],
    });
  });

  it("is a no-op when nothing changed (several workers booting at once converge)", async () => {
    const again = await reconcileSchedulers(queues, [account("a", ["2"]), account("b")], {
      billsMs: 60_000,
      snapshotsMs: 300_000,
    });
    expect(again).toEqual({ added: [], updated: [], removed: [] });
  });

  it("updates changed intervals and removes schedulers of accounts no longer configured", async () => {
    const r2 = await reconcileSchedulers(queues, [account("a")], { billsMs: 30_000, snapshotsMs: 300_000 });
    expect(r2).toEqual({ added: [], updated: ["bills:a"], removed: ["bills:b", "snapshots:a"] });
    expect(await schedulers()).toEqual({ bills: [["bills:a", 30_000]], snapshots: [] });
  });

  it("adds a daily re-sweep per account on the bills queue, at low priority, and removes it when turned off", async () => {
    const on = await reconcileSchedulers(queues, [account("a")], {
      billsMs: 30_000,
      snapshotsMs: 300_000,
      resweepMs: 86_400_000,
    });
    expect(on).toEqual({ added: ["resweep:a"], updated: [], removed: [] });
    const resweep = (await queues.bills.getJobSchedulers(0, -1)).find((s) => s.key === "resweep:a")!;
    expect(resweep).toMatchObject({ name: "resweep", every: 86_400_000 });
    expect(resweep.template?.opts?.priority).toBe(RESWEEP_PRIORITY);
    const off = await reconcileSchedulers(queues, [account("a")], { billsMs: 30_000, snapshotsMs: 300_000 });
    expect(off).toEqual({ added: [], updated: [], removed: ["resweep:a"] });
  });

  it("adds a cross-check per account when CROSS_CHECK_INTERVAL_MS is set, at low priority, and removes it when off", async () => {
    const on = await reconcileSchedulers(queues, [account("a")], {
      billsMs: 30_000,
      snapshotsMs: 300_000,
      crossCheckMs: 3_600_000,
    });
    expect(on).toEqual({ added: ["cross-check:a"], updated: [], removed: [] });
    const check = (await queues.bills.getJobSchedulers(0, -1)).find((s) => s.key === "cross-check:a")!;
    expect(check).toMatchObject({ name: "cross-check", every: 3_600_000 });
    expect(check.template?.opts?.priority).toBe(RESWEEP_PRIORITY);
    const off = await reconcileSchedulers(queues, [account("a")], { billsMs: 30_000, snapshotsMs: 300_000 });
    expect(off).toEqual({ added: [], updated: [], removed: ["cross-check:a"] });
  });

  it("schedules jobs carrying the account", async () => {
    const jobs = await queues.bills.getJobs(["waiting", "delayed", "prioritized"]);
    expect(jobs.map((j) => j.data)).toContainEqual({ account: "a" });
  });
});
