// @module-tag redis
// The fleet's one scheduler on real PostgreSQL and Redis: due times in sync_schedule, one tick at a
// time across workers, deterministic job ids, no pile-up behind a slow account, stalest first.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AccountConfig } from "../../src/config/accounts.ts";
import { closeQueues, createQueues, type Queues } from "../../src/jobs/queues.ts";
import {
  enqueueDue,
  jobIdOf,
  removeLegacySchedulers,
  RESWEEP_PRIORITY,
  wantedWork,
} from "../../src/jobs/schedulers.ts";
import { claimDue, nextSlot, type DueItem } from "../../src/store/sync-schedule.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";
import { createTestRedis, type TestRedis } from "../support/redis.ts";

let r: TestRedis;
let queues: Queues;
let m: MigratedDb;
beforeAll(async () => {
  r = await createTestRedis();
  queues = createQueues(r.client, r.prefix);
  m = await createMigratedDb();
});
afterAll(async () => {
  await closeQueues(queues);
  await r.cleanup();
  await m.close();
});
beforeEach(async () => {
  await m.db.$executeRawUnsafe("DELETE FROM sync_schedule");
  for (const q of Object.values(queues)) await q.obliterate({ force: true });
});

const account = (name: string, coinIds: string[] = []): AccountConfig => ({
  name,
  coinIds,
  backfillFromMs: 0,
  credentials: { apiKey: "k", apiSecret: "s", passphrase: "p" },
  billsSource: "v2",
});
const intervals = { billsMs: 60_000, snapshotsMs: 300_000 };
const enqueue = (due: DueItem[]) => enqueueDue(queues, due);

describe("wantedWork", () => {
  it("bills for every account, snapshots only with coins, re-sweep and cross-check when on", () => {
    const w = wantedWork([account("a", ["2"]), account("b")], {
      ...intervals,
      resweepMs: 86_400_000,
      crossCheckMs: 3_600_000,
    });
    expect(w.map((x) => `${x.kind}:${x.account}:${x.everyMs}`)).toEqual([
      "bills:a:60000",
      "snapshots:a:300000",
      "resweep:a:86400000",
      "cross-check:a:3600000",
      "bills:b:60000",
      "resweep:b:86400000",
      "cross-check:b:3600000",
    ]);
  });
});

describe("nextSlot", () => {
  it("is in the future, within one interval, on a fixed phase per account", () => {
    const w = { account: "a", kind: "bills" as const, everyMs: 60_000 };
    const now = 1_700_000_000_123;
    const s = nextSlot(w, now);
    expect(s).toBeGreaterThan(now);
    expect(s - now).toBeLessThanOrEqual(60_000);
    expect(nextSlot(w, s) - s).toBe(60_000);
    // Phases differ between accounts: a fleet does not fire at once.
    const phases = new Set(
      Array.from({ length: 100 }, (_, i) => nextSlot({ ...w, account: `acct-${i}` }, now) % 60_000),
    );
    expect(phases.size).toBeGreaterThan(90);
  });
});

describe("claimDue and enqueueDue", () => {
  it("enqueues new accounts at once with deterministic ids, then not again until their next slot", async () => {
    const wanted = wantedWork([account("a", ["2"]), account("b")], intervals);
    const due = await claimDue(m.db, wanted, 100, enqueue);
    expect(due?.map((d) => `${d.kind}:${d.account}`).sort()).toEqual(["bills:a", "bills:b", "snapshots:a"]);
    const bills = await queues.bills.getJobs(["waiting", "prioritized"]);
    expect(bills.map((j) => j.id).sort()).toEqual(
      due!
        .filter((d) => d.kind === "bills")
        .map(jobIdOf)
        .sort(),
    );
    expect((await queues.snapshots.getJobs(["waiting"])).map((j) => j.data.account)).toEqual(["a"]);
    // Nothing more is due now.
    expect(await claimDue(m.db, wanted, 100, enqueue)).toEqual([]);
    // Each next slot within one interval of its kind (where a snapshot slot falls inside the next
    // minute depends on the wall clock: counting every kind within 61 s failed one run in five).
    const next = await m.db.$queryRawUnsafe<{ kind: string; n: number }[]>(
      `SELECT kind, count(*)::int AS n FROM sync_schedule
       WHERE due_at > now() AND due_at <= now() + CASE kind WHEN 'bills' THEN interval '61 seconds'
                                                           ELSE interval '301 seconds' END
       GROUP BY kind ORDER BY kind`,
    );
    expect(next).toEqual([
      { kind: "bills", n: 2 },
      { kind: "snapshots", n: 1 },
    ]);
  });

  it("adds nothing while the account's previous job of that kind still waits (no pile-up)", async () => {
    const wanted = wantedWork([account("slow")], intervals);
    await claimDue(m.db, wanted, 100, enqueue);
    // The slot passes while the job is still waiting.
    await m.db.$executeRawUnsafe("UPDATE sync_schedule SET due_at = now() - interval '1 second'");
    const again = await claimDue(m.db, wanted, 100, enqueue);
    expect(again).toHaveLength(1);
    expect(await queues.bills.getJobCounts("waiting")).toEqual({ waiting: 1 });
  });

  it("claims stalest first and at most the limit", async () => {
    const wanted = wantedWork(
      ["a", "b", "c"].map((n) => account(n)),
      intervals,
    );
    await m.db.$executeRawUnsafe(
      `INSERT INTO sync_schedule (account_name, kind, due_at) VALUES
       ('a', 'bills', now() - interval '1 second'), ('b', 'bills', now() - interval '3 minutes'),
       ('c', 'bills', now() - interval '1 minute')`,
    );
    const due = await claimDue(m.db, wanted, 2, enqueue);
    expect(due!.map((d) => d.account)).toEqual(["b", "c"]);
  });

  it("one tick at a time across workers: a concurrent tick is told to skip", async () => {
    const wanted = wantedWork([account("a")], intervals);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = claimDue(m.db, wanted, 100, async (d) => {
      await held;
      await enqueue(d);
    });
    // Let the first tick take the lock.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await claimDue(m.db, wanted, 100, enqueue)).toBeUndefined();
    release();
    expect(await first).toHaveLength(1);
  });

  it("a failed enqueue rolls the claim back: the item stays due", async () => {
    const wanted = wantedWork([account("a")], intervals);
    await expect(
      claimDue(m.db, wanted, 100, async () => {
        throw new Error("redis down");
      }),
    ).rejects.toThrow("redis down");
    const due = await claimDue(m.db, wanted, 100, enqueue);
    expect(due).toHaveLength(1);
  });

  it("a new account's first re-sweep and cross-check wait for their phase slot, not the first tick", async () => {
    const wanted = wantedWork([account("a")], { ...intervals, resweepMs: 86_400_000, crossCheckMs: 3_600_000 });
    const before = Date.now();
    const due = await claimDue(m.db, wanted, 100, enqueue);
    expect(due!.map((d) => d.kind)).toEqual(["bills"]);
    const rows = await m.db.$queryRawUnsafe<{ kind: string; due_ms: number }[]>(
      "SELECT kind, (extract(epoch FROM due_at) * 1000)::float8 AS due_ms FROM sync_schedule WHERE kind <> 'bills'",
    );
    for (const w of wanted.filter((x) => x.kind !== "bills")) {
      const row = rows.find((r) => r.kind === w.kind)!;
      expect(row.due_ms).toBeGreaterThan(before);
      expect(row.due_ms).toBeLessThanOrEqual(before + w.everyMs + 1_000);
      expect(Math.round(row.due_ms)).toBe(nextSlot(w, Math.round(row.due_ms) - w.everyMs));
    }
  });

  it("re-sweep and cross-check jobs go to the bills queue at low priority", async () => {
    const wanted = wantedWork([account("a")], { ...intervals, resweepMs: 86_400_000, crossCheckMs: 3_600_000 });
    await claimDue(m.db, wanted, 100, enqueue);
    await m.db.$executeRawUnsafe("UPDATE sync_schedule SET due_at = now() - interval '1 second'");
    await claimDue(m.db, wanted, 100, enqueue);
    const jobs = await queues.bills.getJobs(["waiting", "prioritized"]);
    const byName = Object.fromEntries(jobs.map((j) => [j.name, j.opts.priority ?? 0]));
    expect(byName).toEqual({ bills: 0, resweep: RESWEEP_PRIORITY, "cross-check": RESWEEP_PRIORITY });
  });
});

describe("removeLegacySchedulers", () => {
  it("removes the per-account job schedulers older versions kept", async () => {
    await queues.bills.upsertJobScheduler("bills:a", { every: 60_000 }, { name: "bills", data: { account: "a" } });
    await queues.snapshots.upsertJobScheduler(
      "snapshots:a",
      { every: 300_000 },
      { name: "snapshots", data: { account: "a" } },
    );
    expect((await removeLegacySchedulers(queues)).sort()).toEqual(["bills:a", "snapshots:a"]);
    expect(await queues.bills.getJobSchedulers(0, -1)).toEqual([]);
  });
});
