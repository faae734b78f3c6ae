// The fleet's health on real PostgreSQL: each account in exactly one state (disabled, failing,
// stale, fresh, in that order), accounts of the variables counted beside the table's, the history
// horizon from the learnt depth or EXCHANGE_HISTORY_DAYS, the scheduler lag over the bills the
// worker schedules only, and all of it in one query whatever the size of the fleet.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFleetHealth } from "../../src/store/fleet-health.ts";
import type { Db } from "../../src/store/prisma.ts";
import { createMigratedDb, type MigratedDb } from "../support/migrated-db.ts";

const NOW = new Date("2026-06-01T00:00:00.000Z");
const MIN = 60_000;
const DAY = 86_400_000;
const STALE_AFTER = 15 * MIN;

let t: MigratedDb;

async function account(name: string, status: "active" | "disabled" = "active"): Promise<void> {
  await t.db.$executeRawUnsafe(
    `INSERT INTO accounts (name, uid, status, coin_ids, master_key_id, wrapped_key, sealed_credentials)
     VALUES ($1, $1, $2, '{}', 'test-key', '\\x00'::bytea, '\\x01'::bytea)`,
    name,
    status,
  );
}
async function cursor(name: string, ageMs: number): Promise<void> {
  await t.db.$executeRawUnsafe(
    "INSERT INTO sync_state (account_name, stream, cursor_ms, updated_at) VALUES ($1, 'bills', $2::bigint, now())",
    name,
    NOW.getTime() - ageMs,
  );
}
async function verify(name: string, outcome: "pass" | "fail"): Promise<void> {
  await t.db.$executeRawUnsafe(
    "INSERT INTO verify_state (account_name, check_from_ms, outcome) VALUES ($1, 0, $2)",
    name,
    outcome,
  );
}
async function historyDepth(name: string, days: number | null): Promise<void> {
  await t.db.$executeRawUnsafe(
    "INSERT INTO exchange_profiles (account_name, history_ms) VALUES ($1, $2::bigint)",
    name,
    days === null ? null : days * DAY,
  );
}
async function due(name: string, kind: string, agoMs: number): Promise<void> {
  await t.db.$executeRawUnsafe(
    "INSERT INTO sync_schedule (account_name, kind, due_at) VALUES ($1, $2, $3::timestamptz)",
    name,
    kind,
    new Date(NOW.getTime() - agoMs),
  );
}

/** The accounts the worker syncs: the table's readable active ones and two of the variables. */
const NAMES = ["t-fresh", "t-stale", "t-verify-failed", "t-never", "env-main", "env-new"];

beforeAll(async () => {
  t = await createMigratedDb();
  for (const name of ["t-fresh", "t-stale", "t-verify-failed", "t-never", "t-unreadable"]) await account(name);
  await account("t-disabled", "disabled");

  await cursor("t-fresh", MIN);
  await verify("t-fresh", "pass");
  await historyDepth("t-fresh", 90);
  await cursor("t-stale", 20 * MIN);
  await historyDepth("t-stale", null);
  await cursor("t-verify-failed", MIN);
  await verify("t-verify-failed", "fail");
  // Disabled long ago: neither stale nor failing, and no horizon (nobody syncs it).
  await cursor("t-disabled", 40 * DAY);
  await verify("t-disabled", "fail");
  // Active in the table but not synced by the worker (its credentials cannot be opened).
  await cursor("t-unreadable", 50 * DAY);
  await historyDepth("t-unreadable", 60);
  await cursor("env-main", 2 * MIN);
  await verify("env-main", "pass");

  await due("t-fresh", "bills", 5_000);
  await due("env-main", "bills", 30_000);
  await due("t-stale", "bills", -20_000);
  // Rows the worker no longer schedules stay due forever: they must not read as lag.
  await due("t-disabled", "bills", 10 * DAY);
  await due("t-unreadable", "bills", 3 * DAY);
  await due("t-fresh", "snapshots", DAY);
});
afterAll(async () => {
  await t?.close();
});

describe("readFleetHealth", () => {
  it("puts every account in one state: disabled, failing, stale, then fresh", async () => {
    const h = await readFleetHealth(t.db, { names: NAMES, staleAfterMs: STALE_AFTER, now: NOW });
    expect(h.byState).toEqual({
      fresh: ["env-main", "t-fresh"],
      stale: ["t-stale", "t-unreadable"],
      failing: ["env-new", "t-never", "t-verify-failed"],
      disabled: ["t-disabled"],
    });
    expect(h.counts).toEqual({ fresh: 2, stale: 2, failing: 3, disabled: 1 });
  });

  it("counts a disabled row as disabled even while a worker still lists it, and a name listed twice once", async () => {
    const h = await readFleetHealth(t.db, {
      names: [...NAMES, "t-disabled", "env-main"],
      staleAfterMs: STALE_AFTER,
      now: NOW,
    });
    expect(h.counts).toEqual({ fresh: 2, stale: 2, failing: 3, disabled: 1 });
  });

  it("moves an account between fresh and stale at staleAfterMs", async () => {
    const wide = await readFleetHealth(t.db, { names: NAMES, staleAfterMs: 30 * MIN, now: NOW });
    expect(wide.byState.stale).toEqual(["t-unreadable"]);
    const narrow = await readFleetHealth(t.db, { names: NAMES, staleAfterMs: 90_000, now: NOW });
    expect(narrow.byState.fresh).toEqual(["t-fresh"]);
    expect(narrow.byState.stale).toEqual(["env-main", "t-stale", "t-unreadable"]);
  });

  it("gives the history days left of synced active accounts with a known depth: learnt, else the default", async () => {
    const learnt = await readFleetHealth(t.db, { names: NAMES, staleAfterMs: STALE_AFTER, now: NOW });
    expect(learnt.history.map((h) => [h.account, h.depthDays, round(h.daysLeft)])).toEqual([
      ["t-fresh", 90, round(90 - MIN / DAY)],
      ["t-unreadable", 60, 10],
    ]);
    expect(learnt.historyDaysLeftMin).toBe(10);

    const withDefault = await readFleetHealth(t.db, {
      names: NAMES,
      staleAfterMs: STALE_AFTER,
      historyDaysDefault: 30,
      now: NOW,
    });
    expect(withDefault.history.map((h) => [h.account, h.depthDays, round(h.daysLeft)])).toEqual([
      ["env-main", 30, round(30 - (2 * MIN) / DAY)],
      ["t-fresh", 90, round(90 - MIN / DAY)],
      // history_ms NULL: no limit seen, so the configured depth applies.
      ["t-stale", 30, round(30 - (20 * MIN) / DAY)],
      ["t-unreadable", 60, 10],
      ["t-verify-failed", 30, round(30 - MIN / DAY)],
    ]);
  });

  it("reads the scheduler lag from the due bills of the accounts it is given only", async () => {
    const h = await readFleetHealth(t.db, { names: NAMES, staleAfterMs: STALE_AFTER, now: NOW });
    expect(h.schedulerLagMs).toBe(30_000);
    const none = await readFleetHealth(t.db, { names: ["t-stale"], staleAfterMs: STALE_AFTER, now: NOW });
    expect(none.schedulerLagMs).toBe(0);
  });

  it("reads an empty fleet as zeros", async () => {
    const empty = await createMigratedDb();
    try {
      const h = await readFleetHealth(empty.db, { names: [], staleAfterMs: STALE_AFTER, now: NOW });
      expect(h).toEqual({
        counts: { fresh: 0, stale: 0, failing: 0, disabled: 0 },
        byState: { fresh: [], stale: [], failing: [], disabled: [] },
        history: [],
        historyDaysLeftMin: null,
        schedulerLagMs: 0,
      });
    } finally {
      await empty.close();
    }
  });

  it("asks PostgreSQL once for a fleet of a thousand accounts", async () => {
    const big = await createMigratedDb();
    try {
      // 1,000 table accounts (every tenth disabled) and 200 of the variables; cursors of every age.
      await big.db.$executeRawUnsafe(
        `INSERT INTO accounts (name, uid, status, coin_ids, master_key_id, wrapped_key, sealed_credentials)
         SELECT 'a' || i, 'u' || i, CASE WHEN i % 10 = 0 THEN 'disabled' ELSE 'active' END, '{}', 'k', '\\x00', '\\x01'
         FROM generate_series(1, 1000) i`,
      );
      await big.db.$executeRawUnsafe(
        `INSERT INTO sync_state (account_name, stream, cursor_ms)
         SELECT 'a' || i, 'bills', $1::bigint - i * 60000 FROM generate_series(1, 1000) i WHERE i % 7 <> 0`,
        NOW.getTime(),
      );
      const names = [
        ...Array.from({ length: 1000 }, (_, i) => `a${i + 1}`).filter((_, i) => (i + 1) % 10 !== 0),
        ...Array.from({ length: 200 }, (_, i) => `env${i}`),
      ];
      const calls: string[] = [];
      const h = await readFleetHealth(countCalls(big.db, calls), {
        names,
        staleAfterMs: STALE_AFTER,
        historyDaysDefault: 90,
        now: NOW,
      });
      expect(calls).toEqual(["$queryRawUnsafe"]);
      // Disabled: i % 10 = 0 (100). Failing: no cursor (i % 7 = 0 and not disabled: 142 - 14) and the
      // 200 of the variables. Fresh: a cursor at most 15 min old (i ≤ 15 but 7, 10 and 14). Stale: the rest.
      expect(h.counts).toEqual({ fresh: 12, stale: 760, failing: 328, disabled: 100 });
      expect(h.history).toHaveLength(772);
      expect(h.historyDaysLeftMin).toBeCloseTo(90 - 999 / 1440, 6);
    } finally {
      await big.close();
    }
  });
});

const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** The client, recording the name of every client method called (a model delegate counts as one). */
function countCalls(db: Db, calls: string[]): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop === "string" && !prop.startsWith("_") && typeof v === "function")
        return (...args: unknown[]) => {
          calls.push(prop);
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      if (typeof prop === "string" && !prop.startsWith("$") && typeof v === "object" && v !== null) calls.push(prop);
      return v;
    },
  });
}
